/// How hard zlib works for what a release writes: its `level` and `memoryLevel` (the size of
/// its match-finding hash table), chosen by measurement.
///
/// The database of a 1M-station release (232 MB; zlib, one core): level 6 with zlib's default
/// memory level took 8.6 s for 98.03 MB; level 5 with memory level 9 takes 5.9 s for 98.52 MB
/// (+0.5 %); level 4, 4.5 s for 100.56 MB (+2.6 %); level 9, five times level 6 for 2 % less.
/// The deltas are a few hundred kilobytes gzipped: level 6 costs them nothing worth saving.
package struct GzipSettings: Sendable {
    package var level: Int32
    package var memoryLevel: Int32

    /// Every new install downloads it; every release compresses it once.
    package static let database = GzipSettings(level: 5, memoryLevel: 9)
    package static let delta = GzipSettings(level: 6, memoryLevel: 8)
}
