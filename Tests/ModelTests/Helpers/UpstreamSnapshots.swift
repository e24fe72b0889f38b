import Foundation

/// Upstream snapshots made from the bundled 2021-03-12 ekidata files, as a later snapshot would be.
enum UpstreamSnapshots {
    /// A copy of the 2021-03-12 files under the names ekidata would give them on `date` (YYYYMMDD),
    /// each line passed through `edit` (file name → line → new line, or nil to drop it) and
    /// `appended` lines added at the end of each file.
    static func from2021(into folder: String, date: String, edit: (String, String) -> String? = { $1 },
                         appended: [String: [String]] = [:]) throws -> String {
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let names = ["company20200619.csv": "company\(date).csv", "line20210312free.csv": "line\(date)free.csv",
                     "station20210312free.csv": "station\(date)free.csv", "join20210312.csv": "join\(date).csv", "pref.csv": "pref.csv"]
        for (old, new) in names {
            let text = try String(contentsOfFile: (Fixtures.ekidata2021 as NSString).appendingPathComponent(old), encoding: .utf8)
            var lines = text.split(separator: "\n", omittingEmptySubsequences: true).map(String.init)
            lines = [lines[0]] + lines.dropFirst().compactMap { edit(new, $0) } + (appended[new] ?? [])
            try (lines.joined(separator: "\n") + "\n").write(toFile: (folder as NSString).appendingPathComponent(new), atomically: true, encoding: .utf8)
        }
        return folder
    }

    /// The 2024-03-16 Hokuriku event as upstream records it, under its own codes where the plan
    /// `datasets/plans/2024-03-16-hokuriku.jsonl` invented provisional ones: operator 303 (the
    /// plan's 301), line 99428 (99440), 敦賀 9942801 (9944001) and 大聖寺 9942819 (9944019). The
    /// stations that change hands keep their codes, as in the plan. With `stationBetween`, upstream
    /// also puts a station of its own, 西松任 9942602, between 西金沢 and 金沢, which the plan
    /// connected directly; without `openDates`, its new stations carry no opening date.
    static func hokuriku2024(into folder: String, stationBetween: Bool = false, openDates: Bool = true) throws -> String {
        let opened = openDates ? "2024-03-16" : "0000-00-00"
        return try from2021(into: folder, date: "20240316", edit: { file, line in
            var fields = line.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
            let first = Int(fields[0]) ?? 0
            switch file {
            case "line20240316free.csv" where first == 11415:
                fields[2] = "JR北陸本線(米原～敦賀)"
                fields[4] = "JR北陸本線(米原～敦賀)"
            case "station20240316free.csv":
                if (1141513...1141529).contains(first) { fields[5] = "99428" }
                if (1141530...1141542).contains(first) { fields[5] = "99426" }
                if first == 1141543 { fields[12] = "2024-03-16"; fields[13] = "2" }
            case "join20240316.csv" where first == 11415:
                let (a, b) = (Int(fields[1]) ?? 0, Int(fields[2]) ?? 0)
                if a == 1141512 && b == 1141513 { return "99428,9942801,1141513" }
                if a == 1141529 && b == 1141530 { return "99428,1141529,9942819" }
                if a >= 1141513 && b <= 1141529 { fields[0] = "99428" }
                if a >= 1141530 && b <= 1141542 { fields[0] = "99426" }
                if b == 1141543 { return nil }
            default: break
            }
            return fields.joined(separator: ",")
        }, appended: [
            "company20240316.csv": ["303,99,ハピラインふくい,ハピラインフクイ,株式会社ハピラインふくい,ハピラインふくい,https://www.hapi-line.co.jp/,0,0,303"],
            "line20240316free.csv": ["99428,303,ハピラインふくい線,ハピラインフクイセン,ハピラインふくい線,,,,136.19,35.95,10,0,99428"],
            "station20240316free.csv": [
                "9942801,1141512,敦賀,,,99428,18,914-0055,敦賀市鉄輪町１丁目,136.076488,35.644767,\(opened),0000-00-00,0,9942801",
                "9942819,1141530,大聖寺,,,99428,17,922-0842,加賀市熊坂町,136.314205,36.300311,\(opened),0000-00-00,0,9942819",
            ] + (stationBetween ? ["9942602,9942602,西松任,,,99426,17,921-8001,金沢市,136.634695,36.565664,\(opened),0000-00-00,0,9942602"] : []),
            "join20240316.csv": stationBetween ? ["99426,1141542,9942602", "99426,9942602,9942601"] : ["99426,1141542,9942601"],
        ])
    }
}
