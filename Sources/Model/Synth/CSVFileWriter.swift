import CCSV
import Foundation
import StationSupport

/// Writes CSV rows to a file through a temporary name: fields that need it are quoted by
/// libcsv's `csv_write` (quotes doubled), the others written as they are, as ekidata does.
package final class CSVFileWriter {
    private let path: String
    private let temporary: String
    private let sink: FileSink
    private var buffer: [UInt8] = []

    package init(path: String) throws {
        self.path = path
        temporary = AtomicFile.temporaryPath(for: path)
        sink = try FileSink(path: temporary)
        buffer.reserveCapacity(1 << 20)
    }

    package func write(_ fields: [String]) throws {
        for (index, field) in fields.enumerated() {
            if index > 0 { buffer.append(0x2C) }
            var field = field
            field.withUTF8 { bytes in
                if bytes.contains(where: { $0 == 0x2C || $0 == 0x22 || $0 == 0x0A || $0 == 0x0D }) {
                    let needed = csv_write(nil, 0, bytes.baseAddress, bytes.count)
                    let start = buffer.count
                    buffer.append(contentsOf: repeatElement(0, count: needed))
                    buffer.withUnsafeMutableBufferPointer { out in
                        _ = csv_write(out.baseAddress! + start, needed, bytes.baseAddress, bytes.count)
                    }
                } else {
                    buffer.append(contentsOf: bytes)
                }
            }
        }
        buffer.append(0x0A)
        if buffer.count > 1 << 20 { try flush() }
    }

    private func flush() throws {
        try buffer.withUnsafeBytes { try sink.write($0) }
        buffer.removeAll(keepingCapacity: true)
    }

    package func finish() throws {
        do {
            try flush()
            try sink.finish()
            try AtomicFile.moveIntoPlace(temporary, path, replacing: true)
        } catch {
            try? FileManager.default.removeItem(atPath: temporary)
            throw error
        }
    }
}
