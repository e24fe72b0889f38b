/// Where an import changes its way of writing and checking: the sizes at which the cheaper way
/// for a large import pays, and a seam between a commit and its checks. The public
/// `ImportOptions` say what to import; these say how, and only tests change them.
package struct ImportTuning: Sendable {
    /// A first import of files this large (in all) writes with a rollback journal
    /// (`MasterDatabase.withRollbackJournal`). Below it the WAL's second write of each page costs
    /// little, and a first import that fails leaves the file byte for byte as it was (a journal's
    /// switch and switch back advance the file's change counter).
    package var rollbackJournalFromBytes = 64 << 20
    /// A committed import that changes this many stations or more is checked after its commit
    /// (`ImportRun.checkAfterCommit`): its version's pages are copied from the write-ahead log
    /// while its findings are found, instead of after.
    package var checksAfterCommitFromStations = 1_000
    /// The page cache of the connection that checks such a version, in KiB (SQLite's default is
    /// 2,000). The rules each read the changed stations and the lines they are on, whose pages
    /// are scattered over the table and, just committed, in the write-ahead log: at 1M stations
    /// a 1 % version's are about 50 MB, read from the file once per rule when they do not fit.
    /// Below the compare's peak memory, which this phase follows.
    package var checksAfterCommitCacheKiB = 64 << 10
    /// Runs between such an import's commit and its checks, where another process may commit a
    /// version, or the process be killed.
    package var afterCommit: (@Sendable () throws -> Void)? = nil

    /// The tuning every import but a test's uses.
    package init() {}
}
