import Foundation

/// Files are written under a temporary name beside their destination, then renamed,
/// so that a reader never sees a half-written file.
package enum AtomicFile {
    package static func temporaryPath(for path: String) -> String {
        let url = URL(fileURLWithPath: path)
        return url.deletingLastPathComponent()
            .appendingPathComponent(".\(url.lastPathComponent)\(temporaryMarker)\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
            .path
    }

    private static let temporaryMarker = ".tmp-"

    /// Whether a file name is one `temporaryPath` makes (a leftover, if its writer is dead).
    package static func isTemporaryName(_ name: String) -> Bool { name.hasPrefix(".") && name.contains(temporaryMarker) }

    /// Renames `source` to `destination` (same file system, so the rename is atomic).
    package static func moveIntoPlace(_ source: String, _ destination: String, replacing: Bool) throws {
        if !replacing && FileManager.default.fileExists(atPath: destination) {
            throw FileError(cannot: "rename \(source) to \(destination)", code: EEXIST, reason: "a file is already there")
        }
        try FileChecks.requireReplaceable(destination)
        guard rename(source, destination) == 0 else {
            throw FileError(cannot: "rename \(source) to \(destination)")
        }
    }

    /// Writes `data` to `path` through a temporary file and a rename.
    package static func write(_ data: Data, to path: String) throws {
        let temporary = temporaryPath(for: path)
        do {
            try data.write(to: URL(fileURLWithPath: temporary))
            try moveIntoPlace(temporary, path, replacing: true)
        } catch {
            try? FileManager.default.removeItem(atPath: temporary)
            throw error
        }
    }
}
