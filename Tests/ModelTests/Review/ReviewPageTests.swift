import Foundation
import GRDB
import StationCheck
import StationCurate
import StationDelta
import StationImport
import StationLog
import StationRelease
import StationReview
import StationSchema
import StationSupport
import StationVersion
import StationWeights
import Testing

/// The review page in a real browser: headless Chromium loads the file, runs its script, and
/// the test reads the DOM it dumps; a screenshot is kept for a person to look at.
@Suite(.tags(.browser), .leftOutOfQuickRuns) struct ReviewPageTests {
    let scratch = Scratch()

    /// Version 2 of the base fixture with one station of every map kind.
    private func reviewedDatabase() throws -> MasterDatabase {
        let database = try scratch.baseDatabase()
        try Curator(database).apply([
            LocatedOperation(.add(table: .stations, values: [
                "station_cd": "9900108", "station_g_cd": "9900108", "station_name": "テスト港", "line_cd": "99001",
                "lat": "35.62", "lon": "139.75", "e_status": "0",
            ])),
            LocatedOperation(.connect(line: 99001, stations: [9900107, 9900108])),
            LocatedOperation(.close(table: .stations, key: ["1120206"], date: "2024-03-16", cascade: false)),
            LocatedOperation(.edit(table: .stations, key: ["9900104"], values: ["lat": "35.641"])),
            LocatedOperation(.edit(table: .stations, key: ["1120202"], values: ["station_name": "長苗代<script>"])),
            LocatedOperation(.edit(table: .stations, key: ["1120203"], values: ["weight": "3"])),
            LocatedOperation(.split(old: 1120101, new: 9920607, line: 11201, values: ["station_name": "八戸（青い森）"], connectTo: [1120102])),
            LocatedOperation(.edit(table: .lines, key: ["99001"], values: ["company_cd": "2"])),
        ], memo: "review fixture")
        return database
    }

    private static func chromium(_ arguments: [String]) throws -> CommandRunner.Result {
        let program = URL(fileURLWithPath: "/usr/bin/chromium")
        guard FileManager.default.isExecutableFile(atPath: program.path) else {
            Issue.record("Debian's chromium is not installed (scripts/test installs it)")
            throw CancellationError()
        }
        return try CommandRunner.run(["--headless", "--no-sandbox", "--disable-gpu", "--virtual-time-budget=5000"] + arguments, program: program)
    }

    private static func matches(_ pattern: String, in text: String) -> [[String]] { pageMatches(pattern, in: text) }
    private func matches(_ pattern: String, in text: String) -> [[String]] { pageMatches(pattern, in: text) }

    @Test func thePageMarksEveryChangedStationListsEveryChangeAndFetchesNothing() throws {
        let database = try reviewedDatabase()
        let report = try Reviewer(database).review()
        let page = scratch.path("review-2.html")
        try ReviewFile.write(ReviewPage.html(report), to: page)

        let dom = try Self.chromium(["--dump-dom", "file://" + page])
        #expect(dom.status == 0)
        let html = dom.stdout
        #expect(html.contains("data-ready=\"true\""), "the page's script ran to its end")
        let markers = Self.matches(#"<path class="marker[^"]*" data-station="(\d+)" data-kind="([a-z]+)""#, in: html)
        #expect(Dictionary(uniqueKeysWithValues: markers.map { ($0[0], $0[1]) }) == [
            "9900108": "new", "1120206": "closed", "9900104": "moved", "1120202": "renamed",
            "1120203": "updated", "9920607": "duplicate",
        ])
        #expect(markers.count == 6, "one marker per changed station")
        let rows = Self.matches(#"<tr class="change" data-table="([a-z]+)" data-kind="([A-Z]+)""#, in: html)
        #expect(rows.count == report.changes.count)
        let logged = try LogReader(database).log(LogFilter(version: 2)).count
        #expect(rows.count == logged)
        #expect(Set(rows.map { $0[1] }) == ["INSERT", "UPDATE", "DELETE", "DUPLICATE"])
        // Nothing fetched from anywhere: no src or href, no CSS url(), no import.
        #expect(Self.matches(#"(?:src|href)\s*=\s*"([^"]*)""#, in: html).isEmpty)
        #expect(!html.replacingOccurrences(of: "url(#", with: "").contains("url(") && !html.contains("@import"), "url() only names the page's own arrowheads")
        // A name is text, never markup.
        #expect(html.contains("長苗代&lt;script&gt;") && !html.contains("長苗代<script>"))
        // The words a curator reads.
        #expect(html.contains("company_cd 99 テスト鉄道 → 2 JR東日本"))
        #expect(html.contains("moved 1.2 km"))
        #expect(html.contains("DUPLICATE 1120101 八戸 (JR東北本線(八戸～青森)) → 9920607 八戸（青い森） (JR東北本線(八戸～青森))"))
        #expect(Self.matches(#"<figure class="pin-map" data-extent="([^"]+)""#, in: html).map { $0[0] } == ["all Japan", "Kanto", "Tokyo 23 wards"])

        let screenshots = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent(".build/test-screenshots")
        try FileManager.default.createDirectory(at: screenshots, withIntermediateDirectories: true)
        try Self.screenshot(page, as: "review-fixture.png")
    }

    static let screenshots = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent(".build/test-screenshots")

    /// The first screen a curator sees on a laptop, 1280 × 800, kept for a person to look at.
    static func screenshot(_ page: String, as name: String) throws {
        try FileManager.default.createDirectory(at: screenshots, withIntermediateDirectories: true)
        let shot = screenshots.appendingPathComponent(name).path
        try? FileManager.default.removeItem(atPath: shot)
        let screenshot = try chromium(["--screenshot=" + shot, "--window-size=1280,800", "file://" + page])
        #expect(screenshot.status == 0)
        let png = try Data(contentsOf: URL(fileURLWithPath: shot))
        #expect(png.starts(with: [0x89, 0x50, 0x4E, 0x47]) && png.count > 10_000)
    }

    /// The real data: version 2 the ekidata 2021 import over 2019, version 3 the Hokuriku plan.
    private func realHistory() throws -> MasterDatabase {
        let database = try MasterDatabase.create(at: scratch.path("real.sqlite"))
        try Importer(database).importSnapshot([Fixtures.ekidata2019])
        try Importer(database).importSnapshot([Fixtures.ekidata2021])
        try Curator(database).apply(planAt: Fixtures.repository.appendingPathComponent("datasets/plans/2024-03-16-hokuriku.jsonl").path)
        return database
    }

    /// What headless Chromium's DOM says of a review page, after its script ran at 1280 × 800.
    private struct RenderedPage {
        let html: String

        var legend: [String: Int] {
            Dictionary(uniqueKeysWithValues: pageMatches(#"<small data-count="([a-z]+)">(\d+)</small>"#, in: html).map { ($0[0], Int($0[1])!) })
        }
        var drawn: [String: Int] {
            var counts: [String: Int] = [:]
            for marker in pageMatches(#"<path class="marker" data-station="\d+" data-kind="([a-z]+)""#, in: html) { counts[marker[0], default: 0] += 1 }
            counts["finding"] = pageMatches(#"<path class="finding-mark [a-z]+" data-kind="finding""#, in: html).count
            return counts
        }
        /// The map's places of the changed stations, findings and links' ends, in map units.
        var places: [(x: Double, y: Double)] {
            pageMatches(#"data-x="([-0-9.]+)" data-y="([-0-9.]+)" transform"#, in: html).map { (Double($0[0])!, Double($0[1])!) }
            + pageMatches(#"<line class="link [a-z]+" data-link="[a-z]+" x1="([-0-9.]+)" y1="([-0-9.]+)""#, in: html).map { (Double($0[0])!, Double($0[1])!) }
        }
        var home: [Double] { pageMatches(#"data-home="([-0-9. ]+)""#, in: html)[0][0].split(separator: " ").map { Double($0)! } }
        var verdict: String {
            pageMatches(#"<h2 id="verdict-text">(.*?)</h2>"#, in: html)[0][0].replacingOccurrences(of: "<code>", with: "").replacingOccurrences(of: "</code>", with: "")
        }
    }

    private func render(_ report: ReviewReport, _ name: String) throws -> RenderedPage {
        let page = scratch.path(name)
        try ReviewFile.write(ReviewPage.html(report), to: page)
        let dom = try Self.chromium(["--window-size=1280,800", "--dump-dom", "file://" + page])
        #expect(dom.status == 0 && dom.stdout.contains("data-ready=\"true\""))
        try Self.screenshot(page, as: name.replacingOccurrences(of: ".html", with: ".png"))
        return RenderedPage(html: dom.stdout)
    }

    /// The checks every review page must pass: the legend counts what is drawn, the map opens on
    /// the changes (every one in view, no more than the margin around them), findings before changes.
    private func expectAnswersFirst(_ page: RenderedPage, _ report: ReviewReport) {
        #expect(page.legend == page.drawn.merging(ReviewChange.MapKind.allCases.map { ($0.rawValue, 0) }) { drawn, _ in drawn })
        #expect(page.drawn.values.reduce(0, +) > 0)
        let places = page.places, home = page.home
        let minX = places.map(\.x).min()!, maxX = places.map(\.x).max()!, minY = places.map(\.y).min()!, maxY = places.map(\.y).max()!
        #expect(home[0] <= minX && home[1] <= minY && home[0] + home[2] >= maxX && home[1] + home[3] >= maxY, "every change in view: \(home)")
        let pad = max(15, 0.08 * max(maxX - minX, maxY - minY)) + 0.2
        #expect(home[2] <= maxX - minX + 2 * pad && home[3] <= maxY - minY + 2 * pad, "no larger than the changes and their margin: \(home)")
        #expect(home[2] < 2_000, "not all Japan")
        let html = page.html
        #expect(html.range(of: "id=\"verdict\"")!.lowerBound < html.range(of: "id=\"findings\"")!.lowerBound)
        #expect(html.range(of: "id=\"findings\"")!.lowerBound < html.range(of: "id=\"changes\"")!.lowerBound)
        #expect(matches("<li class=\"finding ", in: html.components(separatedBy: "<details>")[0]).count == report.introducedFindings.total)
    }

    @Test func theImportsPageSaysItShipsWhatPhonesGetAndDrawsTheFindings() throws {
        let database = try realHistory()
        let report = try Reviewer(database).review(version: 2)
        let page = try render(report, "review-2.html")
        expectAnswersFirst(page, report)
        #expect(page.verdict == "Releasable: station-admin release --version 2 would publish version 2")
        #expect(matches(#"<li data-from="1">a phone at version 1: a delta of [0-9,]+ bytes gzip \((\d+) statements\)"#, in: page.html).first?[0]
            == String(report.summary.changes))
        #expect(page.html.contains("<li data-from=\"new\">a new install or an app update: the full database: 10866 stations (10478 open), 617 lines, 10190 connections"))
        #expect(page.html.contains("<p id=\"split-moves\">No split: no user record moves.</p>"))
        // Every introduced finding with a place is drawn and has its way to the map.
        #expect(report.introducedFindings.total == 5 && page.drawn["finding"] == 5)
        #expect(matches(#"<button type="button" class="to-map""#, in: page.html).count == 5)
        #expect(page.drawn["new"] == 17 && page.drawn["closed"]! > 0 && page.drawn["renamed"]! > 0)
    }

    @Test func thePlansPageShowsTransfersSplitsAsArrowsAndNamesOnceZoomed() throws {
        let database = try realHistory()
        let report = try Reviewer(database).review()
        let page = try render(report, "review-3.html")
        expectAnswersFirst(page, report)
        #expect(page.verdict == "Releasable: station-admin release would publish version 3")
        #expect(matches(#"<li data-from="(\d)">"#, in: page.html).map { $0[0] } == ["1", "2"])
        // The sizes are the published files', byte for byte.
        let released = try Publisher(database).release(ReleaseOptions(outputFolder: scratch.path("release"), verify: false))
        let shown = matches(#"<li data-from="(\d)">a phone at version \d: a delta of ([0-9,]+ bytes) gzip"#, in: page.html)
            .map { [$0[0], $0[1]] }
        let published = released.released.deltas.sorted { $0.from < $1.from }
            .map { ["\($0.from)", ReviewPage.byteSize($0.file.bytes)] }
        #expect(shown == published && published.count == 2, "\(shown) \(published)")
        #expect(ReviewPage.byteSize(1_232) == "1,232 bytes" && ReviewPage.byteSize(744) == "744 bytes" && ReviewPage.byteSize(2_609_152) == "2,609,152 bytes")
        #expect(page.html.contains("<p id=\"split-moves\">2 splits: on every phone, the visit records of 2 stations are copied to 2 new ones"))
        // The stations that passed to IR and Hapi-Line are transfers, not "updated"; the splits are arrows.
        #expect(page.drawn["transferred"]! >= 20 && page.drawn["updated", default: 0] == 0, "\(page.drawn)")
        #expect(page.drawn["duplicate"] == 2)
        #expect(matches(#"<line class="link duplicate" data-link="duplicate"[^>]*marker-end="url\(#arrow-duplicate\)""#, in: page.html).count == 2)
        // Zoomed in on Hokuriku, the names are shown.
        #expect(page.html.contains("<svg id=\"change-map\" class=\"zoomed\"") || matches(#"<svg id="change-map"[^>]*class="zoomed""#, in: page.html).count == 1)
        #expect(page.html.contains(">敦賀</text>") || page.html.contains(">大聖寺</text>"))
    }

    /// A version larger than the limits, as at a million changes, with the limits made small
    /// so that the real 2021 import is "large": a kind over the limit is drawn as density and
    /// lists its first changes with the command that lists the rest; the network is density too;
    /// a long findings list shows the first of each rule. The page still opens and runs.
    @Test func aLargeVersionDrawsDensityListsTheFirstChangesAndSaysHowToSeeTheRest() throws {
        let database = try realHistory()
        var limits = ReviewLimits()
        limits.changesPerKind = 5; limits.listedBeyond = 3; limits.networkSegments = 100
        limits.findingsListed = 2; limits.findingsPerRule = 1; limits.findingMarks = 3
        let report = try Reviewer(database).review(version: 2, limits: limits)
        let whole = try Reviewer(database).review(version: 2)
        let overview = report.overview

        // Every change is counted; no kind lists more than the limits allow.
        #expect(overview.total == report.summary.changes && overview.total == whole.changes.count)
        for (table, kinds) in overview.counts {
            for (kind, count) in kinds {
                let listed = report.changes.filter { $0.table == table && $0.kind == kind }
                #expect(listed.count == (count <= 5 ? count : 3), "\(table) \(kind.rawValue)")
                #expect(overview.unlisted(table: table, kind: kind) == count - listed.count)
                // The listed ones are the version's own changes, described as the whole page describes them.
                for change in listed { #expect(whole.changes.contains(change), "\(change.key)") }
            }
        }
        // New stations (17) are over the limit: density, and the cells count each one's place.
        let newStations = try #require(overview.density[.new])
        #expect(newStations.total == 17 && overview.mapCounts[.new] == 17 && newStations.cells.values.reduce(0, +) == 17)
        #expect(!overview.markers.contains { $0.mapKind == .new })
        #expect(report.network.segments.isEmpty && report.network.density!.total == whole.network.segments.count)

        let page = try render(report, "review-2-large.html")
        let html = page.html
        #expect(html.contains("<small data-density=\"new\">17 as density</small>"))
        #expect(matches(##"<path class="density" data-kind="new" fill="#1b8a3a" fill-opacity="[0-9.]+" d="M"##, in: html).count >= 1)
        #expect(matches(#"<path class="network-density""#, in: html).count >= 1 && !html.contains("<path class=\"network\""))
        #expect(page.drawn["new", default: 0] == 0)
        let unlistedStations = overview.unlisted(table: "stations", kind: .insert)
        #expect(html.contains("stations INSERT: \(unlistedStations) more, <code>station-admin log --version 2 --table stations --type INSERT</code>"))
        // The first finding of each rule, and the command for the rest.
        let rules = Set(report.introducedFindings.counts.keys)
        #expect(matches("<li class=\"finding ", in: html.components(separatedBy: "<details>")[0]).count == rules.count)
        #expect(html.contains("<code>station-admin check --version 2 --rule "))
        #expect(page.drawn["finding"] == 3)
        // The command that lists the rest lists them.
        let logged = try LogReader(database).log(LogFilter(version: 2, table: "stations", type: .insert)).count
        #expect(logged == overview.counts["stations"]?[.insert])
    }

    @Test func aVersionWithAnUnwaivedErrorIsRefusedInItsFirstLine() throws {
        let database = try scratch.baseDatabase()
        try Curator(database).apply([LocatedOperation(.edit(table: .stations, key: ["9900101"], values: ["open_ymd": "2030-01-01", "close_ymd": "2020-01-01"]))])
        let page = try render(try Reviewer(database).review(), "review-refused.html")
        #expect(page.verdict.hasPrefix("Refused: 1 error not waived; station-admin release would stop until each is fixed or waived"), "\(page.verdict)")
        #expect(page.html.contains("<ul class=\"blocking\"><li><code>stations 9900101</code> <code>dates-out-of-order</code>"))
    }

    @Test func aRestoreIsMarkedAndAPastVersionIsReviewedAsItWas() throws {
        let database = try reviewedDatabase()
        try Curator(database).apply([LocatedOperation(.restore(table: .stations, key: ["1120206"]))])
        let restored = try Reviewer(database).review()
        #expect(restored.changes.compactMap { change in change.mapKind.map { "\(change.station!) \($0.rawValue)" } } == ["1120206 restored"])
        let past = try Reviewer(database).review(version: 2)
        let logged = try LogReader(database).log(LogFilter(version: 2)).count
        #expect(past.summary.version == 2 && past.changes.count == logged)
        #expect(past.changes.first { $0.station == 1120206 }?.mapKind == .closed)
        #expect(throws: NoSuchVersion(requested: 9, newest: 3)) { try Reviewer(database).review(version: 9) }
    }

    /// A 300-pixel map gets one dot per occupied pixel, not one per station: at 1M stations
    /// all Japan was 979,434 dots and 50 MB of the page.
    @Test func aPinMapDrawsOneDotForEachPixelThatHasAnOpenStation() throws {
        let database = try reviewedDatabase()
        let report = try Reviewer(database).review()
        let html = ReviewPage.html(report)
        let figures = Self.matches(#"<figure class="pin-map" data-extent="([^"]+)">\n<svg[^>]*><path class="dots" d="([^"]*)"/>"#, in: html)
        #expect(figures.map { $0[0] } == MapExtent.examples.map(\.name))
        for (map, figure) in zip(report.pinMaps, figures) {
            let extent = map.extent
            func pixel(_ latitude: Double, _ longitude: Double) -> [Int] {
                let pixel = extent.pixel(latitude: latitude, longitude: longitude, width: PinMap.width)
                return [Int(pixel.x), Int(pixel.y)]
            }
            let open = try database.read { db in
                try Row.fetchAll(db, sql: """
                    SELECT lat, lon FROM stations WHERE e_status <> \(MasterTable.closedStatus) AND lat BETWEEN ? AND ? AND lon BETWEEN ? AND ?
                    """, arguments: [extent.south, extent.north, extent.west, extent.east]).map { pixel($0[0], $0[1]) }
            }
            let drawn = map.stations.map { pixel($0[0], $0[1]) }
            #expect(Set(drawn) == Set(open), "every pixel with an open station has its dot (\(extent.name))")
            #expect(drawn.count == Set(drawn).count, "no pixel is drawn twice (\(extent.name))")
            let squares = Self.matches(#"M([-0-9.]+) ([-0-9.]+)h1\.2v1\.2h-1\.2z"#, in: figure[1])
            #expect(squares.count == drawn.count)
            #expect(squares.allSatisfy { Double($0[0])! >= 0 && Double($0[0])! <= PinMap.width }, "every dot inside its map")
            #expect(map.spread.stationsInView == open.count)
        }
        let japan = report.pinMaps[0]
        #expect(japan.stations.count < japan.spread.stationsInView, "Hachinohe's and Tokyo's neighbours share pixels at this scale")
    }

    /// The ekidata 2021 import (v1), a curator's closing date kept by the next import (v2), a
    /// curator's closure upstream then closes on another day (v3), the Hokuriku plan (v4), and
    /// upstream's snapshot of the same event imported with the conflict decided for theirs and the
    /// four provisional rows adopted (v5). Its page names every decision.
    @Test func theAdoptingImportsPageShowsTheConflictTheAdoptionsAndTheKeptValues() throws {
        let database = try MasterDatabase.create(at: scratch.path("merge.sqlite"))
        try Importer(database).importSnapshot([Fixtures.ekidata2021])
        try Curator(database).apply([LocatedOperation(.edit(table: .stations, key: ["1111116"], values: ["close_ymd": "2017-07-05"]))], memo: "closing date from the operator")
        try Curator(database).apply([LocatedOperation(.edit(table: .stations, key: ["1110602"], values: ["e_status": "2", "close_ymd": "2025-03-01"]))], memo: "東滝川 closes")
        try Curator(database).apply(planAt: Fixtures.repository.appendingPathComponent("datasets/plans/2024-03-16-hokuriku.jsonl").path)
        let upstream = try UpstreamSnapshots.hokuriku2024(into: scratch.path("upstream"))
        let stations = (upstream as NSString).appendingPathComponent("station20240316free.csv")
        try String(contentsOfFile: stations, encoding: .utf8).replacingOccurrences(
            of: "1110602,1110602,東滝川,,,11106,1,073-0026,滝川市東滝川,141.98031,43.574037,0000-00-00,0000-00-00,0,",
            with: "1110602,1110602,東滝川,,,11106,1,073-0026,滝川市東滝川,141.98031,43.574037,0000-00-00,2025-03-15,2,"
        ).write(toFile: stations, atomically: true, encoding: .utf8)
        let imported = try Importer(database).importSnapshot([upstream], options: ImportOptions(
            memo: "ekidata 2024-03-16", decisions: MergeDecisions(prefer: .theirs, adoptAll: true)))
        #expect(imported.committed && imported.version == 5)

        let report = try Reviewer(database).review()
        #expect(report.suggestions.count == imported.suggestions.count, "the page counts the suggestions the import listed")
        #expect(report.merge.decided.map(\.description) == [
            "stations 1110602 close_ymd: conflict decided for theirs, 2025-03-15 (base NULL, ours 2025-03-01 from v3)",
        ])
        #expect(report.merge.adopted.filter { $0.table != "connections" }.map(\.key) == ["301", "99440", "9944001", "9944019"])
        #expect(report.merge.kept.map(\.description).contains("stations 1111116 close_ymd: kept 2017-07-05 from v2 (the file says NULL)"))

        let page = try render(report, "review-merge.html")
        let html = page.html
        #expect(html.range(of: "id=\"merge\"")!.lowerBound < html.range(of: "id=\"findings\"")!.lowerBound, "the decisions come before the findings")
        let decided = matches(#"<ul id="merge-decided"><li data-outcome="theirs">(.*?)</li></ul>"#, in: html)
        #expect(decided.first?[0] == "stations 1110602 close_ymd: conflict decided for theirs, 2025-03-15 (base NULL, ours 2025-03-01 from v3)")
        #expect(matches(#"<li data-outcome="adopted">stations 9944001: provisional, closed for upstream's 9942801</li>"#, in: html).count == 1)
        #expect(matches(#"<li data-outcome="adopted">"#, in: html).count == report.merge.adopted.count)
        #expect(html.contains("<h3>Curated values kept where upstream's file says otherwise (\(report.merge.keptCount))</h3>"))
        #expect(html.contains("stations 1111116 close_ymd: kept 2017-07-05 from v2 (the file says NULL)"))
        #expect(html.contains("\(report.suggestions.count) split suggestions"))

        let markdown = ReviewMarkdown.markdown(report)
        #expect(markdown.contains("## Merge decisions\n\n### Conflicts decided (1)\n\n- stations 1110602 close\\_ymd: conflict decided for theirs"))
        #expect(markdown.contains("- stations 9944019: provisional, closed for upstream's 9942819"))

        // A revert's page says which version it reverts and what it decided.
        try Curator(database).revert(version: 3, decisions: MergeDecisions(prefer: .theirs))
        let revert = try Reviewer(database).review()
        #expect(revert.merge.reverts == 3)
        #expect(revert.merge.decided.map(\.column).sorted() == ["close_ymd", "e_status"])
        let revertPage = try render(revert, "review-revert.html")
        #expect(revertPage.html.contains("<p id=\"reverts\">Reverts version 3:"))
        #expect(ReviewMarkdown.markdown(revert).contains("Reverts version 3."))
    }

    @Test func markdownHasTheSummaryTheChangesAndTheFindings() throws {
        let database = try reviewedDatabase()
        let markdown = ReviewMarkdown.markdown(try Reviewer(database).review())
        #expect(markdown.hasPrefix("<!-- station-admin review -->\n# Version 2: review fixture\n"))
        #expect(markdown.contains("| stations | 2 | 3 | 1 | 0 | 1 |"))
        #expect(markdown.contains("- UPDATE `1120202` 長苗代\\<script\\> (JR八戸線): station\\_name 長苗代 → 長苗代\\<script\\>"))
        #expect(markdown.contains("## Findings introduced by version 2 (2)"))
        #expect(markdown.contains("`station-moved-far`"))
    }

    @Test func theCommandWritesThePageAndNeverReplacesAFileNotOurs() throws {
        _ = try reviewedDatabase()
        let db = scratch.path("master.sqlite")
        let written = try CommandRunner.run(["review", "--db", db], in: scratch.url)
        #expect(written.status == 0)
        #expect(written.stderr.hasPrefix("Wrote reviews/review-2.html ("))
        #expect(FileManager.default.fileExists(atPath: scratch.path("reviews/review-2.html")))
        // Again: it replaces its own page.
        #expect(try CommandRunner.run(["review", "--db", db], in: scratch.url).status == 0)

        let notes = scratch.path("notes.md")
        try Data("my notes\n".utf8).write(to: URL(fileURLWithPath: notes))
        let refused = try CommandRunner.run(["review", "--db", db, "--markdown", "--output", notes])
        #expect(refused.status == 1)
        #expect(refused.stderr == "\(notes): exists and is not a review page StationAdmin wrote; not replaced (choose another --output, or move it away)\n")
        #expect(try String(contentsOfFile: notes, encoding: .utf8) == "my notes\n")
        let stdout = try CommandRunner.run(["review", "--db", db, "--markdown", "--output", "-"])
        #expect(stdout.status == 0 && stdout.stdout.contains("# Version 2: review fixture"))
    }
}

/// The groups of every match of `pattern` in `text`.
func pageMatches(_ pattern: String, in text: String) -> [[String]] {
    let expression = try! NSRegularExpression(pattern: pattern)
    return expression.matches(in: text, range: NSRange(text.startIndex..., in: text)).map { match in
        (1..<match.numberOfRanges).map { String(text[Range(match.range(at: $0), in: text)!]) }
    }
}
