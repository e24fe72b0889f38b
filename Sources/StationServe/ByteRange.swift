import Foundation

/// A `Range: bytes=…` request header, resolved against a file's size (RFC 9110 §14).
///
/// One range is served as 206; a header this server does not serve (several ranges, another
/// unit, bad syntax) is ignored and the whole file sent, as the RFC allows; a range that starts
/// past the end is 416. For example, on 1,000 bytes: `bytes=0-99` → 0…99, `bytes=900-` → 900…999,
/// `bytes=-100` → 900…999, `bytes=1000-` → unsatisfiable, `bytes=0-9,20-29` → the whole file.
enum ByteRange: Equatable {
    case whole
    case part(ClosedRange<Int>)
    case unsatisfiable

    init(header: String?, size: Int) {
        guard let header, header.hasPrefix("bytes="), !header.contains(",") else {
            self = .whole
            return
        }
        let spec = header.dropFirst("bytes=".count).trimmingCharacters(in: .whitespaces)
        let parts = spec.split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2, parts.allSatisfy({ $0.allSatisfy(\.isNumber) }) else {
            self = .whole
            return
        }
        let first = Int(parts[0]), last = Int(parts[1])
        switch (first, last) {
        case let (start?, end?) where start <= end:
            self = start < size ? .part(start...min(end, size - 1)) : .unsatisfiable
        case let (start?, nil) where parts[1].isEmpty:
            self = start < size ? .part(start...(size - 1)) : .unsatisfiable
        case let (nil, length?) where parts[0].isEmpty:
            self = length > 0 && size > 0 ? .part(max(size - length, 0)...(size - 1)) : .unsatisfiable
        default:
            self = .whole
        }
    }
}
