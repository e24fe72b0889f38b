import Foundation

/// The date of an upstream snapshot, `YYYY-MM-DD`: what an import records so that an older
/// snapshot is never imported over a newer one by mistake.
///
/// ekidata names its files by date (`station20210312free.csv`, `company20200619.csv`), so the
/// date is read from the file's name: the first run of eight digits that is a real calendar
/// date. A file named otherwise (`pref.csv`, `stations.csv`) has none, unless the curator gives
/// one (`ImportOptions.snapshotDate`).
public enum SnapshotDate {
    /// The date in a file's name, if it has one: `station20210312free.csv` → `2021-03-12`.
    public static func fromFileName(_ path: String) -> String? {
        let name = Array((path as NSString).lastPathComponent.utf8)
        var start = 0
        while start + 8 <= name.count {
            let digits = name[start..<start + 8]
            let before = start == 0 ? nil : name[start - 1]
            let after = start + 8 < name.count ? name[start + 8] : nil
            // Eight digits, not part of a longer number.
            if digits.allSatisfy(isDigit), !(before.map(isDigit) ?? false), !(after.map(isDigit) ?? false) {
                let text = String(decoding: digits, as: UTF8.self)
                let date = "\(text.prefix(4))-\(text.dropFirst(4).prefix(2))-\(text.suffix(2))"
                if isCalendarDate(date) { return date }
            }
            start += 1
        }
        return nil
    }

    /// Whether `text` is a real `YYYY-MM-DD` date (not 2021-02-30).
    public static func isCalendarDate(_ text: String) -> Bool {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].count == 4, parts[1].count == 2, parts[2].count == 2,
              let year = Int(parts[0]), let month = Int(parts[1]), let day = Int(parts[2]),
              year >= 1800, (1...12).contains(month), day >= 1 else { return false }
        let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
        let days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]
        return day <= days
    }

    private static func isDigit(_ byte: UInt8) -> Bool { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) }
}
