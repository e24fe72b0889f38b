/// How hard zlib works for what a release writes: its `level` and `memoryLevel` (the size of
/// its match-finding hash table), chosen by measurement.
///
/// Level 5 with memory level 9 gzips a release's database markedly faster than level 6 for
/// hardly more bytes; lower levels grow the file, higher ones cost far more time for little
/// (the levels' table is in benchmarks/RESULTS.md).
/// The deltas are a few hundred kilobytes gzipped: level 6 costs them nothing worth saving.
package struct GzipSettings: Sendable {
    package var level: Int32
    package var memoryLevel: Int32

    /// Every new install downloads it; every release compresses it once.
    package static let database = GzipSettings(level: 5, memoryLevel: 9)
    package static let delta = GzipSettings(level: 6, memoryLevel: 8)
}
