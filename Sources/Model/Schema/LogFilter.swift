import GRDB

/// Which `updates` rows `log` shows; nil means any.
public struct LogFilter: Sendable {
    /// Only rows of this data version.
    public var version: Int?
    /// Only rows of this table (`stations`, …).
    public var table: String?
    /// Only rows of this key (`1120101`, `11302/1130201/1130202`).
    public var key: String?
    /// Only rows of this kind.
    public var type: Update.Kind?
    /// Only rows from this bound on (inclusive), as `git log --since`.
    public var since: LogBound?
    /// Only rows up to this bound (inclusive), as `git log --until`.
    public var until: LogBound?
    /// Only versions committed by this author (as recorded in the master's `versions`).
    public var author: String?
    /// At most this many rows (after the order is applied).
    public var limit: Int?
    /// Newest first, as `git log`; a key's story reads oldest first.
    public var newestFirst: Bool

    /// A filter; with no arguments, every row, oldest first.
    public init(version: Int? = nil, table: String? = nil, key: String? = nil, type: Update.Kind? = nil,
                since: LogBound? = nil, until: LogBound? = nil, author: String? = nil,
                limit: Int? = nil, newestFirst: Bool = false) {
        self.version = version
        self.table = table
        self.key = key
        self.type = type
        self.since = since
        self.until = until
        self.author = author
        self.limit = limit
        self.newestFirst = newestFirst
    }
}

/// One end of `log --since`/`--until`: a data version (`4`, `v4`) or a date (`2026-11-24`,
/// or a timestamp as `update_date` holds it, `2026-11-24T10:00:00Z`).
public enum LogBound: Sendable, Equatable {
    case version(Int)
    case date(String)

    /// Reads `4`, `v4`, `2026-11-24` or `2026-11-24T10:00`; nil for anything else.
    public init?(_ text: String) {
        let digits = text.hasPrefix("v") ? String(text.dropFirst()) : text
        if let version = Int(digits), version >= 0 {
            self = .version(version)
            return
        }
        let bytes = Array(text.utf8)
        let isDate = bytes.count >= 10 && bytes.prefix(10).enumerated().allSatisfy { offset, byte in
            offset == 4 || offset == 7 ? byte == UInt8(ascii: "-") : (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
        }
        guard isDate, bytes.count == 10 || bytes[10] == UInt8(ascii: "T") else { return nil }
        self = .date(text)
    }

    /// What a bound may be, for an error message.
    public static let expectation = "a data version (4 or v4) or a date (2026-11-24, or 2026-11-24T10:00)"

    /// SQL condition and arguments: `updates` rows at or after (`isLower`) or at or before this bound.
    /// A date bound compares as many characters as it gives, so `--until 2026-11-24` keeps the whole day.
    package func condition(isLower: Bool) -> (String, StatementArguments) {
        switch self {
        case .version(let version):
            return ("user_version \(isLower ? ">=" : "<=") ?", [version])
        case .date(let date):
            return ("substr(update_date, 1, ?) \(isLower ? ">=" : "<=") ?", [date.count, date])
        }
    }
}
