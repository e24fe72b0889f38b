import Foundation
import StationSupport

/// Writes a review page or its Markdown: atomically, and never over a file we did not write.
public enum ReviewFile {
    /// The first line of every review file: how a later review knows it may replace it. A file
    /// format's identifier, not a command: it stays as the first pages were written with it.
    package static let htmlMark = "<!-- station-admin review -->"
    package static let markdownMark = htmlMark

    /// Writes a review atomically; a file that is not a review (no mark on its first line) is
    /// never replaced.
    ///
    /// - Throws: `ReviewFileError.notAReview`, `FileError`.
    public static func write(_ text: String, to path: String) throws {
        let manager = FileManager.default
        var isFolder: ObjCBool = false
        if manager.fileExists(atPath: path, isDirectory: &isFolder) {
            if isFolder.boolValue { throw ReviewFileError.isAFolder(path) }
            let head = (try? FileHandle(forReadingFrom: URL(fileURLWithPath: path)).read(upToCount: htmlMark.utf8.count)) ?? nil
            guard head.map({ String(decoding: $0, as: UTF8.self) }) == htmlMark else { throw ReviewFileError.notOurs(path) }
        }
        let folder = URL(fileURLWithPath: path).deletingLastPathComponent().path
        do {
            try FileChecks.makeFolder(folder)
            if access(folder, W_OK) != 0 { throw FileError(cannot: "write in \(folder)") }
            try AtomicFile.write(Data(text.utf8), to: path)
        } catch {
            throw ReviewFileError.cannotWrite(path, reason: FileError.words(for: error))
        }
    }
}

/// A review file `review` will not write.
public enum ReviewFileError: Error, LocalizedError, Equatable {
    case notOurs(String)
    case isAFolder(String)
    case cannotWrite(String, reason: String)

    public var errorDescription: String? {
        switch self {
        case let .notOurs(path):
            return "\(path): exists and is not a review page StationAdmin wrote; not replaced (choose another --output, or move it away)"
        case let .cannotWrite(path, reason):
            return "\(path): cannot write the review (\(reason)); choose another --output"
        case let .isAFolder(path):
            return "\(path): a folder (expected the path of the file to write, e.g. --output reviews/review.html)"
        }
    }
}
