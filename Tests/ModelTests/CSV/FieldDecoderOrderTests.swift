import Foundation
import StationCSV
import StationSchema
import StationSupport
import Testing

/// Numbers and dates are read before their bytes are checked as UTF-8 (one that reads is
/// ASCII): a field of any kind that is not UTF-8 is still refused as such, and one that is
/// UTF-8 but not of its kind as not of its kind.
struct FieldDecoderOrderTests {
    private let decoder = FieldDecoder(file: "station.csv", columns: MasterTable.stations.columns)

    private func message(_ column: String, _ bytes: [UInt8]) -> String? {
        let index = MasterTable.stations.columns.firstIndex { $0.name == column }!
        do {
            _ = try bytes.withUnsafeBufferPointer { try decoder.parse($0, column: index, line: 7) }
            return nil
        } catch let error as InputError where error.input == .csv {
            return error.message
        } catch {
            return "\(error)"
        }
    }

    /// Shift_JIS 東京 (not UTF-8), alone and after digits, in a column of each kind.
    @Test(arguments: ["station_cd", "line_cd", "lon", "lat", "open_ymd", "station_name", "post"])
    func notUTF8IsSaidFirst(column: String) {
        for bytes: [UInt8] in [[0x93, 0x8C, 0x8B, 0x9E], Array("2021".utf8) + [0x93, 0x8C], [0x31, 0xFF]] {
            #expect(message(column, bytes)?.hasPrefix("\(column) is not valid UTF-8") == true, "\(column): \(message(column, bytes) ?? "read")")
        }
    }

    @Test func utf8ThatDoesNotReadIsRefusedForItsKind() {
        #expect(message("station_cd", Array("東京".utf8)) == "station_cd \"東京\" is not an integer (expected a positive code up to 2147483647)")
        #expect(message("open_ymd", Array("令和3年".utf8)) == "open_ymd \"令和3年\" is not a valid date (expected YYYY-MM-DD, or 0000-00-00 for unknown)")
        #expect(message("lat", Array("北緯35度".utf8))?.hasPrefix("lat \"北緯35度\" is not a number") == true, "\(message("lat", Array("北緯35度".utf8)) ?? "read")")
    }

    /// Every day from 0 to 32 of every month from 0 to 13, in common, leap and century years,
    /// against the Gregorian calendar.
    @Test func datesAsTheGregorianCalendarHasThem() {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        var wrong: [String] = []
        for year in [1, 1900, 1999, 2000, 2004, 2021, 2100, 9999] {
            for month in 0...13 {
                for day in 0...32 {
                    let text = String(format: "%04d-%02d-%02d", year, month, day)
                    let components = DateComponents(year: year, month: month, day: day)
                    let expected = (1...12).contains(month) && day >= 1
                        && calendar.date(from: components).map { calendar.component(.day, from: $0) == day } == true
                    let valid = Array(text.utf8).withUnsafeBufferPointer { FieldDecoder.isValidDate($0) }
                    if valid != expected { wrong.append(text) }
                }
            }
        }
        #expect(wrong.isEmpty, "\(wrong.prefix(10))")
    }
}
