import Foundation
import GRDB
import GRDBSQLite
import StationSchema
import StationSupport

/// Turns one CSV field into the value stored in the master database, per the diff rules:
/// trimmed of spaces and tabs; empty is NULL; `0000-00-00` is NULL; codes are integers;
/// coordinates are numbers in range.
///
/// For example, in a stations file `" 35.6355 "` in `lat` gives `35.6355`,
/// `0000-00-00` in `close_ymd` gives NULL and `ab` in `station_cd` throws
/// `stations.csv:42: station_cd "ab" is not an integer`.
///
/// Fields are read as bytes, without a String per field: an import reads millions.
package struct FieldDecoder {
    package let file: String
    /// The columns of the file's fields, in order; messages name them.
    private let columns: [MasterTable.Column]
    /// What each column's field must be, without the column's name: copied for every field,
    /// so it holds no reference to retain and release (a `Column` copy cost three).
    private let rules: [Rule]

    private struct Rule {
        package let kind: MasterTable.ColumnKind
        package let domain: MasterTable.IntegerDomain?
        package let isRequired: Bool
        package let maxBytes: Int
    }

    /// A field's value; text points into the record's bytes.
    package enum Value {
        case null
        case integer(Int64)
        case real(Double)
        case text(UnsafeBufferPointer<UInt8>)
    }

    package init(file: String, columns: [MasterTable.Column]) {
        self.file = file
        self.columns = columns
        // An empty value for a column with a default (`weight`) would be stored as the default,
        // not as the NULL a message would report: it is refused instead.
        rules = columns.map {
            Rule(kind: $0.kind, domain: $0.domain, isRequired: $0.isRequired || $0.defaultValue != nil, maxBytes: $0.textLimit?.rawValue ?? .max)
        }
    }

    /// One field of a column, as the database stores it.
    package static func decode(_ bytes: ArraySlice<UInt8>, as column: MasterTable.Column, file: String, line: Int) throws -> DatabaseValue {
        try bytes.withUnsafeBufferPointer { buffer in
            try FieldDecoder(file: file, columns: [column]).parse(buffer, column: 0, line: line).databaseValue
        }
    }

    /// The field of column `index` (of those the decoder was made with).
    package func parse(_ field: UnsafeBufferPointer<UInt8>, column index: Int, line: Int) throws -> Value {
        let rule = rules[index]
        let bytes = Self.trim(field)
        if bytes.isEmpty {
            if rule.isRequired { throw problem(index, line, "is empty (expected \(rule.domain?.expectation ?? Self.expectation(rule.kind)))") }
            return .null
        }
        // A number or a date that reads is ASCII, so only text is checked before it is read;
        // a field that does not read is checked before it is refused, as before. The messages are
        // made by functions of their own: the common case makes no closure for them (one retained
        // the decoder's arrays for every coordinate).
        switch rule.kind {
        case .text:
            try requireUTF8(bytes, index, line)
            guard bytes.count <= rule.maxBytes else {
                throw problem(index, line, "is \(bytes.count) bytes long (expected at most \(rule.maxBytes) bytes of UTF-8, about \(rule.maxBytes / 3) Japanese characters; shorten it)")
            }
            return .text(bytes)
        case .integer:
            guard let value = Self.integer(bytes) else {
                try requireUTF8(bytes, index, line)
                throw problem(index, line, "\(Self.shown(bytes)) is not an integer (expected \(rule.domain?.expectation ?? Self.expectation(rule.kind)))")
            }
            if rule.domain?.contains(value) == false { throw problem(index, line, "\(value) is out of range (expected \(rule.domain!.expectation))") }
            return .integer(value)
        case .real:
            return .real(try real(bytes, index, line))
        case .coordinate(let range):
            let value = try real(bytes, index, line)
            guard range.contains(value) else {
                throw problem(index, line, "\(String(decoding: bytes, as: UTF8.self)) is out of range (expected degrees from \(range.lowerBound) to \(range.upperBound))")
            }
            return .real(value)
        case .date:
            if bytes.count == 10 && memcmp(bytes.baseAddress!, Self.unknownDate.utf8Start, 10) == 0 { return .null }
            guard Self.isValidDate(bytes) else {
                try requireUTF8(bytes, index, line)
                throw problem(index, line, "\(Self.shown(bytes)) is not a valid date (expected YYYY-MM-DD, or 0000-00-00 for unknown)")
            }
            return .text(bytes)
        }
    }

    /// A number: a short decimal read here, else one strtod reads.
    private func real(_ bytes: UnsafeBufferPointer<UInt8>, _ index: Int, _ line: Int) throws -> Double {
        if let value = Self.shortDecimal(bytes) { return value }
        try requireUTF8(bytes, index, line)
        return try number(bytes, columns[index].name, rules[index].kind, line)
    }

    private func requireUTF8(_ bytes: UnsafeBufferPointer<UInt8>, _ index: Int, _ line: Int) throws {
        guard Self.isValidUTF8(bytes) else {
            throw problem(index, line, "is not valid UTF-8 (the file may be Shift_JIS: convert it with `iconv -f SHIFT_JIS -t UTF-8 \(file) > converted.csv`)")
        }
    }

    /// The error of the field of column `index` on `line`: the column's name, then `what`.
    private func problem(_ index: Int, _ line: Int, _ what: String) -> InputError {
        InputError(.csv, file: file, line: line, message: "\(columns[index].name) \(what)")
    }

    private static func shown(_ bytes: UnsafeBufferPointer<UInt8>) -> String { String(decoding: bytes, as: UTF8.self).quotedForMessage() }

    /// ekidata's date for "unknown", read as NULL.
    private static let unknownDate: StaticString = "0000-00-00"

    private func number(_ bytes: UnsafeBufferPointer<UInt8>, _ name: @autoclosure () -> String, _ kind: MasterTable.ColumnKind, _ line: Int) throws -> Double {
        let isPlainNumber = bytes.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x2E || $0 == 0x2D || $0 == 0x2B || $0 == 0x65 || $0 == 0x45 }
        // strtod reads a C string: copy the (short) field with a terminating NUL.
        var value: Double?
        if isPlainNumber && bytes.count < 64 {
            withUnsafeTemporaryAllocation(of: CChar.self, capacity: bytes.count + 1) { buffer in
                for (offset, byte) in bytes.enumerated() { buffer[offset] = CChar(bitPattern: byte) }
                buffer[bytes.count] = 0
                var end: UnsafeMutablePointer<CChar>?
                let parsed = strtod(buffer.baseAddress!, &end)
                if end == buffer.baseAddress! + bytes.count && parsed.isFinite { value = parsed }
            }
        }
        guard let value else {
            throw InputError(.csv, file: file, line: line, message: "\(name()) \(String(decoding: bytes, as: UTF8.self).quotedForMessage()) is not a number (expected \(Self.expectation(kind)))")
        }
        return value
    }

    /// A decimal of at most 15 digits and no exponent (`-35.6812`, `139.7671248`, `3.`): the
    /// double `strtod` gives, without it; nil for anything else, which `strtod` then reads.
    ///
    /// The digits make an integer below 10^15 and the point a power of ten up to 10^15, both
    /// exact in a double, so one division rounds their quotient once, to nearest: the correctly
    /// rounded value, as strtod's (Clinger's fast path), without strtod's multiple precision for
    /// the two coordinates of every station on the parsing thread, which sets an import's pace.
    package static func shortDecimal(_ bytes: UnsafeBufferPointer<UInt8>) -> Double? {
        var index = 0
        let negative = bytes.first == 0x2D
        if negative || bytes.first == 0x2B { index = 1 }
        var mantissa: Int64 = 0
        var digits = 0
        var fractionDigits = 0
        var afterPoint = false
        while index < bytes.count {
            let byte = bytes[index]
            index += 1
            if byte == 0x2E {
                if afterPoint { return nil }
                afterPoint = true
                continue
            }
            let digit = byte &- 0x30
            guard digit <= 9 else { return nil }
            digits += 1
            guard digits <= 15 else { return nil }
            mantissa = mantissa * 10 + Int64(digit)
            if afterPoint { fractionDigits += 1 }
        }
        guard digits > 0 else { return nil }
        let magnitude = Double(mantissa) / exactPowersOfTen[fractionDigits]
        return negative ? -magnitude : magnitude
    }

    /// 10^0 … 10^15, each exact in a double.
    private static let exactPowersOfTen: [Double] = (0...15).map { exponent in (0..<exponent).reduce(1.0) { value, _ in value * 10 } }

    /// A decimal integer with an optional sign, as `Int64(String)` reads it.
    package static func integer(_ bytes: UnsafeBufferPointer<UInt8>) -> Int64? {
        var index = 0
        var negative = false
        if bytes[0] == 0x2D || bytes[0] == 0x2B { negative = bytes[0] == 0x2D; index = 1 }
        guard index < bytes.count else { return nil }
        var value: Int64 = 0
        while index < bytes.count {
            let digit = bytes[index] &- 0x30
            guard digit <= 9 else { return nil }
            let (times, overflow1) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = negative ? times.subtractingReportingOverflow(Int64(digit)) : times.addingReportingOverflow(Int64(digit))
            if overflow1 || overflow2 { return nil }
            value = sum
            index += 1
        }
        return value
    }

    /// Whether the bytes are well-formed UTF-8 (Unicode, table 3-7: no overlong form, no
    /// surrogate, nothing above U+10FFFF). A byte at a time by that table, not the standard
    /// library's decoder, a scalar at a time, over every Japanese name on the parsing thread.
    /// `FieldDecoderUTF8Tests` holds it to that decoder.
    package static func isValidUTF8(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        let count = bytes.count
        var index = 0
        while index < count {
            let lead = bytes[index]
            if lead < 0x80 {
                index += 1
                continue
            }
            func continuation(_ offset: Int) -> Bool { bytes[index + offset] & 0xC0 == 0x80 }
            switch lead {
            case 0xC2...0xDF:
                guard index + 1 < count, continuation(1) else { return false }
                index += 2
            case 0xE0...0xEF:
                // E0 needs A0–BF after it (no overlong form), ED 80–9F (no surrogate).
                let low: UInt8 = lead == 0xE0 ? 0xA0 : 0x80, high: UInt8 = lead == 0xED ? 0x9F : 0xBF
                guard index + 2 < count, (low...high).contains(bytes[index + 1]), continuation(2) else { return false }
                index += 3
            case 0xF0...0xF4:
                // F0 needs 90–BF after it (no overlong form), F4 80–8F (nothing above U+10FFFF).
                let low: UInt8 = lead == 0xF0 ? 0x90 : 0x80, high: UInt8 = lead == 0xF4 ? 0x8F : 0xBF
                guard index + 3 < count, (low...high).contains(bytes[index + 1]), continuation(2), continuation(3) else { return false }
                index += 4
            default:
                return false
            }
        }
        return true
    }

    package static func trim(_ bytes: UnsafeBufferPointer<UInt8>) -> UnsafeBufferPointer<UInt8> {
        var start = 0, end = bytes.count
        while start < end, bytes[start] == 0x20 || bytes[start] == 0x09 { start += 1 }
        while end > start, bytes[end - 1] == 0x20 || bytes[end - 1] == 0x09 || bytes[end - 1] == 0x0D { end -= 1 }
        return UnsafeBufferPointer(rebasing: bytes[start..<end])
    }

    /// `YYYY-MM-DD`, a day that exists (read as bytes: a String per date cost more than the check).
    package static func isValidDate(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        func digits(_ range: Range<Int>) -> Int? {
            var value = 0
            for index in range {
                let digit = bytes[index] &- 0x30
                guard digit <= 9 else { return nil }
                value = value * 10 + Int(digit)
            }
            return value
        }
        guard bytes.count == 10, bytes[4] == 0x2D, bytes[7] == 0x2D,
              let year = digits(0..<4), let month = digits(5..<7), let day = digits(8..<10),
              year >= 1, (1...12).contains(month), day >= 1
        else { return false }
        let isLeap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
        // A switch, not an array of the months' lengths: that array was allocated for every date.
        switch month {
        case 2: return day <= (isLeap ? 29 : 28)
        case 4, 6, 9, 11: return day <= 30
        default: return day <= 31
        }
    }

    package static func expectation(_ kind: MasterTable.ColumnKind) -> String {
        switch kind {
        case .integer: return "a whole number"
        case .real: return "a number"
        case .coordinate(let range): return "degrees from \(range.lowerBound) to \(range.upperBound)"
        case .text: return "text"
        case .date: return "a date YYYY-MM-DD"
        }
    }
}
