import Foundation
import StationCheck
import StationDelta
import StationImport
import StationLog
import StationRelease
import StationReview
import StationSchema
import StationSupport
import Testing

/// The bad-input corpus under `Fixtures/bad`: every file is imported over the base
/// database and must fail with its exact message, exit status 1, and no byte changed.
@Suite struct BadInputTests {
    static let expectations: [String: String] = [
        "01-unterminated-quote.csv": ":3: unterminated quoted field: the quote opened on this line is never closed (expected a closing \" before the end of the file)",
        "02-unterminated-quote-at-end.csv": ":4: unterminated quoted field: the quote opened on this line is never closed (expected a closing \" before the end of the file)",
        "03-stray-quote.csv": ":3: malformed CSV in field 3: a quote inside an unquoted field, or text after a closing quote (expected a plain field, or a quoted one like \"a,\"\"b\"\"\" with quotes doubled inside)",
        "04-text-after-closing-quote.csv": ":3: malformed CSV in field 3: a quote inside an unquoted field, or text after a closing quote (expected a plain field, or a quoted one like \"a,\"\"b\"\"\" with quotes doubled inside)",
        "05-too-few-fields.csv": ":3: 14 fields, expected 15 as in the header (station_cd,station_g_cd,station_name,station_name_k,station_name_r,line_cd,pref_cd,post,address,lon,lat,open_ymd,close_ymd,e_status,e_sort)",
        "06-too-many-fields.csv": ":4: 16 fields, expected 15 as in the header (station_cd,station_g_cd,station_name,station_name_k,station_name_r,line_cd,pref_cd,post,address,lon,lat,open_ymd,close_ymd,e_status,e_sort)",
        "07-unknown-header.csv": ":1: unknown header \"code,name,kind\" (expected an ekidata header: \"pref_cd,pref_name\" or \"company_cd,rr_cd,company_name,company_name_k,company_name_h,company_name_r,company_url,company_type,e_status,e_sort\" or \"line_cd,company_cd,line_name,line_name_k,line_name_h,line_color_c,line_color_t,line_type,lon,lat,zoom,e_status,e_sort\" or \"station_cd,station_g_cd,station_name,station_name_k,station_name_r,line_cd,pref_cd,post,address,lon,lat,open_ymd,close_ymd,e_status,e_sort\" or \"line_cd,station_cd1,station_cd2\")",
        "08-unknown-column.csv": ":1: unknown column \"platform\" in field 16 of a stations header (expected one of: station_cd, station_g_cd, station_name, station_name_k, station_name_r, line_cd, pref_cd, post, address, lon, lat, open_ymd, close_ymd, e_status, e_sort, weight)",
        "09-missing-key-column.csv": ":1: missing key column \"station_cd\" in a stations header (expected: station_cd)",
        "10-missing-column.csv": ":1: missing column \"zoom\" in a lines header (expected all of: line_cd, company_cd, line_name, line_name_k, line_name_h, line_color_c, line_color_t, line_type, lon, lat, zoom, e_status, e_sort)",
        "11-duplicate-column.csv": ":1: column \"e_status\" appears twice in the header",
        "12-non-integer-station-code.csv": ":3: station_cd \"ab\" is not an integer (expected a positive code up to 2147483647)",
        "13-non-integer-line-code.csv": ":3: line_cd \"112.01\" is not an integer (expected a positive code up to 2147483647)",
        "14-non-numeric-latitude.csv": ":3: lat \"north\" is not a number (expected degrees from -90.0 to 90.0)",
        "15-latitude-out-of-range.csv": ":3: lat 140.57129 is out of range (expected degrees from -90.0 to 90.0)",
        "16-longitude-out-of-range.csv": ":3: lon 241.42896 is out of range (expected degrees from -180.0 to 180.0)",
        "17-longitude-nan.csv": ":3: lon \"nan\" is not a number (expected degrees from -180.0 to 180.0)",
        "18-impossible-date.csv": ":3: open_ymd \"2021-02-30\" is not a valid date (expected YYYY-MM-DD, or 0000-00-00 for unknown)",
        "19-date-with-slashes.csv": ":3: close_ymd \"2021/03/12\" is not a valid date (expected YYYY-MM-DD, or 0000-00-00 for unknown)",
        "20-shift-jis.csv": ":3: station_name is not valid UTF-8 (the file may be Shift_JIS: convert it with `iconv -f SHIFT_JIS -t UTF-8 {FILE} > converted.csv`)",
        "21-empty.csv": ": empty file (expected a header line, then one row per record)",
        "22-only-byte-order-mark.csv": ": empty file (expected a header line, then one row per record)",
        "23-duplicate-station-key.csv": ":5: duplicate key station_cd 1120102, already on line 3 (expected each key once per file)",
        "24-duplicate-connection-key.csv": ":4: duplicate key line_cd/station_cd1/station_cd2 11201/1120101/1120102, already on line 2 (expected each key once per file)",
        "25-station-on-missing-line.csv": ":3: line_cd 11299 names no row of lines (expected a line_cd that exists in the database or in the lines file)",
        "26-line-of-missing-company.csv": ":4: company_cd 77 names no row of companies (expected a company_cd that exists in the database or in the companies file)",
        "27-truncated-export-closes-most-stations.csv": ": would close 20 of the 23 open rows of stations (87.0%, more than 5%): is the file truncated? If this is really so, import again with --allow-mass-close",
        "28-empty-station-name.csv": ":3: station_name is empty (expected text)",
        "29-non-integer-status.csv": ":3: e_status \"open\" is not an integer (expected 0 (open), 1 (not yet open) or 2 (closed))",
        "30-shift-jis-header.csv": ":1: field 3 of the header is not valid UTF-8 (the file may be Shift_JIS: convert it with `iconv -f SHIFT_JIS -t UTF-8 {FILE} > converted.csv`)",
        "31-unterminated-quote-after-multiline-field.csv": ":5: unterminated quoted field: the quote opened on this line is never closed (expected a closing \" before the end of the file)",
        "32-status-seven.csv": ":3: e_status 7 is out of range (expected 0 (open), 1 (not yet open) or 2 (closed))",
        "33-status-negative.csv": ":3: e_status -2 is out of range (expected 0 (open), 1 (not yet open) or 2 (closed))",
        "34-prefecture-99.csv": ":3: pref_cd 99 is out of range (expected a prefecture code from 1 to 47)",
        "35-negative-station-code.csv": ":3: station_cd -1 is out of range (expected a positive code up to 2147483647)",
        "36-line-code-beyond-32-bits.csv": ":3: line_cd 9223372036854775807 is out of range (expected a positive code up to 2147483647)",
        "37-negative-huge-connection-code.csv": ":3: station_cd2 -9223372036854775807 is out of range (expected a positive code up to 2147483647)",
        "38-zero-company-code.csv": ":3: company_cd 0 is out of range (expected a positive code up to 2147483647)",
        "39-station-name-too-long.csv": ":3: station_name is 301 bytes long (expected at most 300 bytes of UTF-8, about 100 Japanese characters; shorten it)",
        "40-address-too-long.csv": ":3: address is 1809 bytes long (expected at most 600 bytes of UTF-8, about 200 Japanese characters; shorten it)",
        "41-weight-ten.csv": ":3: weight 10 is out of range (expected a map weight: 1 to 9 by hand, 11 or 12 sampled, 13 the rest)",
        "42-weight-zero.csv": ":3: weight 0 is out of range (expected a map weight: 1 to 9 by hand, 11 or 12 sampled, 13 the rest)",
        "43-prefecture-48.csv": ":3: pref_cd 48 is out of range (expected a prefecture code from 1 to 47, or 99 (その他))",
        "44-empty-line-name.csv": ":3: line_name is empty (expected text)",
        "45-station-group-zero.csv": ":3: station_g_cd 0 is out of range (expected a positive code up to 2147483647)",
        "46-empty-company-name.csv": ":2: company_name is empty (expected text)",
        // Every bad row of a file in one run, up to 20.
        "47-three-bad-rows.csv": """
            : 3 bad rows. Fix them and run the command again:
              {FILE}:3: lat "north" is not a number (expected degrees from -90.0 to 90.0)
              {FILE}:5: 14 fields, expected 15 as in the header (\(stationsHeader))
              {FILE}:6: open_ymd "2021-02-30" is not a valid date (expected YYYY-MM-DD, or 0000-00-00 for unknown)
            """,
        "48-twenty-five-bad-rows.csv": """
            : the first 20 bad rows; the reading stopped here, and more may follow. \
            Fix them and run the command again:

            """ + (1...20).map { "  {FILE}:\($0 + 2): station_cd \"x\($0)\" is not an integer (expected a positive code up to 2147483647)" }
            .joined(separator: "\n"),
    ]
    static let stationsHeader = "station_cd,station_g_cd,station_name,station_name_k,station_name_r,line_cd,pref_cd,post,address,lon,lat,open_ymd,close_ymd,e_status,e_sort"

    static func expected(_ file: String, path: String) -> String {
        path + expectations[file]!.replacingOccurrences(of: "{FILE}", with: path)
    }

    @Test func theCorpusHasAnExpectationForEveryFile() throws {
        let files = try FileManager.default.contentsOfDirectory(atPath: Fixtures.bad.path).filter { $0.hasSuffix(".csv") }
        #expect(files.count >= 25)
        #expect(Set(files) == Set(Self.expectations.keys))
    }

    @Test(arguments: expectations.keys.sorted())
    func importFailsWithItsMessageAndChangesNothing(_ file: String) throws {
        let scratch = Scratch()
        let database = try scratch.baseDatabase()
        let before = try database.settledSHA256()
        let path = Fixtures.bad.appendingPathComponent(file).path
        do {
            try Importer(database).importSnapshot([path])
            Issue.record("\(file) was imported")
        } catch let error as LocalizedError {
            #expect(error.errorDescription == Self.expected(file, path: path))
        }
        #expect(try database.settledSHA256() == before)
    }

    @Test func theCommandExitsOneWithTheMessageForEveryFile() throws {
        let scratch = Scratch()
        let database = try scratch.baseDatabase()
        let before = try database.settledSHA256()
        for file in Self.expectations.keys.sorted() {
            for command in ["diff", "import"] {
                let result = try CommandRunner.run([command, "--db", database.path, file], in: Fixtures.bad)
                #expect(result.status == 1, "\(command) \(file)")
                #expect(result.stderr == Self.expected(file, path: file) + "\n")
                #expect(result.stdout.isEmpty)
            }
        }
        #expect(try database.settledSHA256() == before)
    }

    /// A bad value is quoted in the message, cut after 80 characters: a 1 MB field does not
    /// print a megabyte back.
    @Test func aMegabyteFieldIsCutInTheMessage() throws {
        let scratch = Scratch()
        let database = try scratch.baseDatabase()
        let before = try database.settledSHA256()
        let path = scratch.path("huge.csv")
        let field = String(repeating: "x", count: 1_000_000)
        try "station_cd,station_g_cd,station_name,station_name_k,station_name_r,line_cd,pref_cd,post,address,lon,lat,open_ymd,close_ymd,e_status,e_sort\n\(field),1,a,,,11201,2,,,141.4,40.5,,,0,1\n"
            .write(toFile: path, atomically: true, encoding: .utf8)
        let result = try CommandRunner.run(["import", "--db", database.path, path])
        #expect(result.status == 1)
        #expect(result.stderr == "\(path):2: station_cd \"\(String(repeating: "x", count: 80))…\" (1000000 bytes) is not an integer (expected a positive code up to 2147483647)\n")
        #expect(try database.settledSHA256() == before)
    }
}
