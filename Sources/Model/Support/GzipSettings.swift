/// How hard zlib works for what a release writes: its `level` and `memoryLevel` (the size of
/// its match-finding hash table), chosen by measurement.
///
/// Level 5 with memory level 9 was measured (RESULTS.md) to gzip a 1M release's database in
/// two thirds of level 6's time for 0.5 % more bytes; level 4 gives 2.6 % more, level 9 costs
/// five times level 6 for 2 % less.
/// The deltas are a few hundred kilobytes gzipped: level 6 costs them nothing worth saving.
package struct GzipSettings: Sendable {
    package var level: Int32
    package var memoryLevel: Int32

    /// Every new install downloads it; every release compresses it once.
    package static let database = GzipSettings(level: 5, memoryLevel: 9)
    package static let delta = GzipSettings(level: 6, memoryLevel: 8)
}
