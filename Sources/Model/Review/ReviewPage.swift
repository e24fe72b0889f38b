import Foundation
import StationCheck
import StationSchema
import StationSupport

/// The review page of a version: one self-contained HTML file (inline CSS, SVG and script;
/// nothing fetched), which opens from disk.
public enum ReviewPage {
    /// The review page as one HTML document.
    public static func html(_ report: ReviewReport) -> String {
        let summary = report.summary
        let map = ChangeMap(report)
        return """
            \(ReviewFile.htmlMark)
            <!DOCTYPE html>
            <html lang="ja">
            <head>
            <meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <title>Review of version \(summary.version)</title>
            <style>\(style)</style>
            </head>
            <body>
            <header>
            <h1>Version \(summary.version) <small>\(escape(summary.memo ?? "(no memo)"))</small></h1>
            <p class="meta">\(escape(summary.date)) · \(escape(summary.author ?? "unknown author")) · \
            \(summary.changes) changes · \(report.introducedFindings.total) new findings · \(report.suggestions.count) split suggestions</p>
            </header>
            <main>
            \(verdict(report))
            \(report.merge.isEmpty ? "" : "<section id=\"merge\"><h2>Merge decisions</h2>\(merge(report))</section>")
            <section id="findings"><h2>Check findings</h2>\(findings(report))</section>
            <section id="map-section"><h2>Map of the changes</h2>
            \(map.legend)
            <div class="map-wrap">
            \(map.svg)
            <div class="map-buttons"><button type="button" data-zoom="in" title="Zoom in">+</button>\
            <button type="button" data-zoom="out" title="Zoom out">−</button><button type="button" data-zoom="reset" title="Show all">⤢</button></div>
            <aside id="marker-detail" aria-live="polite">Click a marker to see its change. Drag to pan, wheel or +/− to zoom.</aside>
            </div>
            </section>
            <section id="summary"><h2>Counts</h2>\(countsTable(summary.counts))</section>
            <section id="changes"><h2>Changes in words</h2>\(changeFilters(report.changes))\(changeTable(report))</section>
            <section id="suggestions"><h2>Split suggestions</h2>\(suggestions(report.suggestions))</section>
            <section id="pins"><h2>What a phone shows</h2>
            <p>The top \(report.pinCount) pins by weight, then by distance from \
            the centre, as the apps query them; grey dots are the other open stations in view.</p>
            <div class="pin-maps">\(report.pinMaps.map(pinMap).joined())</div></section>
            </main>
            <script>\(script)</script>
            </body>
            </html>

            """
    }

    // MARK: Sections

    /// The first screen: can this version ship, what phones download, what the splits move.
    private static func verdict(_ report: ReviewReport) -> String {
        let version = report.summary.version
        let blocking = report.blockingCount
        let command = escape("\(version == report.newest ? CommandHint("release") : CommandHint("release", "--version", "\(version)"))")
        var html = "<section id=\"verdict\" class=\"verdict \(blocking == 0 ? "releasable" : "refused")\">"
        if blocking == 0 {
            html += "<h2 id=\"verdict-text\">Releasable: <code>\(command)</code> would publish version \(version)</h2>"
        } else {
            let named = report.firstBlocking.prefix(ReviewFindings.firstBlockingKept)
            html += "<h2 id=\"verdict-text\">Refused: \(blocking) error\(blocking == 1 ? "" : "s") not waived; "
                + "<code>\(command)</code> would stop until each is fixed or waived</h2><ul class=\"blocking\">"
                + named.map { "<li><code>\($0.table) \(escape($0.key))</code> <code>\($0.rule.rawValue)</code> \(escape($0.message))</li>" }.joined()
                + (blocking > named.count ? "<li>… and \(blocking - named.count) more (\(escape("\(CommandHint("check"))")))</li>" : "") + "</ul>"
        }
        if version != report.newest {
            html += "<p>Version \(version) is not the newest (\(report.newest)): a plain <code>\(escape("\(CommandHint("release"))"))</code> publishes \(report.newest).</p>"
        }
        let rows = report.fullDatabaseRows
        let full = "the full database: \(rows["stations"] ?? 0) stations (\(report.openStations) open), \(rows["lines"] ?? 0) lines, \(rows["connections"] ?? 0) connections"
        html += "<h3>What phones download</h3><ul id=\"downloads\">"
        html += report.deltas.map { delta in
            "<li data-from=\"\(delta.from)\">a phone at version \(delta.from): a delta of \(byteSize(delta.gzipBytes)) gzip (\(delta.statements) statements)</li>"
        }.joined()
        html += "<li data-from=\"new\">a new install or an app update: \(full), with the carry-over of its splits</li></ul>"
        let splits = report.splits
        if report.splitCount > splits.count {
            html += "<p id=\"split-moves\">\(report.splitCount) splits: on every phone, the visit records of each old station are copied to its new one "
                + "(the old ones keep theirs; <code>\(escape("\(CommandHint("log", "--version", "\(version)", "--type", "DUPLICATE"))"))</code> lists them).</p>"
        } else if splits.isEmpty {
            html += "<p id=\"split-moves\">No split: no user record moves.</p>"
        } else {
            let olds = Set(splits.map { $0.key.components(separatedBy: " → ")[0] }).count
            html += "<p id=\"split-moves\">\(splits.count) split\(splits.count == 1 ? "" : "s"): on every phone, the visit records of \(olds) "
                + "station\(olds == 1 ? "" : "s") are copied to \(splits.count) new one\(splits.count == 1 ? "" : "s") "
                + "(the old ones keep theirs).</p>"
        }
        return html + "</section>"
    }

    /// Bytes as `ls -l` and the manifest have them, grouped by thousands: a curator comparing the
    /// page with the published files finds the same number, not a rounding of it.
    package static func byteSize(_ bytes: Int) -> String {
        var digits = String(bytes), grouped = ""
        while digits.count > 3 {
            grouped = "," + digits.suffix(3) + grouped
            digits.removeLast(3)
        }
        return digits + grouped + (bytes == 1 ? " byte" : " bytes")
    }

    private static let kinds: [Update.Kind] = [.insert, .update, .delete, .restore, .duplicate]

    private static func countsTable(_ counts: [String: [String: Int]]) -> String {
        let tables = MasterTable.all.map(\.name).filter { counts[$0] != nil }
        guard !tables.isEmpty else { return "<p>No changes.</p>" }
        var html = "<table class=\"counts\"><thead><tr><th>table</th>" + kinds.map { "<th>\($0.rawValue)</th>" }.joined() + "</tr></thead><tbody>"
        for table in tables {
            html += "<tr><th>\(table)</th>" + kinds.map { "<td>\(counts[table]?[$0.rawValue] ?? 0)</td>" }.joined() + "</tr>"
        }
        return html + "</tbody></table>"
    }

    private static func changeFilters(_ changes: [ReviewChange]) -> String {
        let tables = MasterTable.all.map(\.name).filter { table in changes.contains { $0.table == table } }
        let kinds = Self.kinds.filter { kind in changes.contains { $0.kind == kind } }
        return """
            <div class="filters">
            <label>table <select id="filter-table"><option value="">all</option>\(tables.map { "<option>\($0)</option>" }.joined())</select></label>
            <label>kind <select id="filter-kind"><option value="">all</option>\(kinds.map { "<option>\($0.rawValue)</option>" }.joined())</select></label>
            <label>search <input id="filter-text" type="search" placeholder="name or code"></label>
            <span id="filter-count">\(changes.count) of \(changes.count)</span>
            </div>
            """
    }

    private static func changeTable(_ report: ReviewReport) -> String {
        let changes = report.changes, version = report.summary.version
        guard !changes.isEmpty else { return "<p>No changes.</p>" }
        var html = ""
        let unlisted = MasterTable.all.flatMap { table in
            kinds.map { (table: table.name, kind: $0, count: report.overview.unlisted(table: table.name, kind: $0)) }
        }.filter { $0.count > 0 }
        if !unlisted.isEmpty {
            html += "<p id=\"unlisted\">A kind of more than \(report.limits.changesPerKind) changes lists its first \(report.limits.listedBeyond) here; "
                + "<code>\(escape("\(CommandHint("log", "--version", "\(version)"))"))</code> lists every change.</p><ul class=\"unlisted\">"
                + unlisted.map { group in
                    "<li data-table=\"\(group.table)\" data-kind=\"\(group.kind.rawValue)\">\(group.table) \(group.kind.rawValue): \(group.count) more, "
                        + "<code>\(escape("\(CommandHint("log", "--version", "\(version)", "--table", group.table, "--type", group.kind.rawValue))"))</code></li>"
                }.joined() + "</ul>"
        }
        html += "<table class=\"changes\"><thead><tr><th>table</th><th>key</th><th>kind</th><th>what</th><th>change</th></tr></thead><tbody>"
        for change in changes {
            html += "<tr class=\"change\" data-table=\"\(change.table)\" data-kind=\"\(change.kind.rawValue)\""
                + (change.station.map { " data-station=\"\($0)\"" } ?? "")
                + "><td>\(change.table)</td><td class=\"key\">\(escape(change.key))</td><td><span class=\"kind \(change.kind.rawValue.lowercased())\">\(change.kind.rawValue)</span></td>"
                + "<td>\(escape(change.title))</td><td>\(escape(change.words))</td></tr>"
        }
        return html + "</tbody></table>"
    }

    private static func findings(_ report: ReviewReport) -> String {
        let version = report.summary.version
        /// A long list shows the first findings of each rule, and the command that lists the rest.
        func list(_ findings: ReviewFindings) -> String {
            let listing = findings.listing
            if let all = listing.all { return items(all) }
            return listing.groups.map { group in
                "<h4>\(group.rule.rawValue) (\(group.total))</h4>" + items(group.first)
                    + (group.total > group.first.count
                        ? "<p class=\"more\">… and \(group.total - group.first.count) more: <code>\(escape("\(CommandHint("check", "--version", "\(version)", "--rule", group.rule.rawValue))"))</code></p>" : "")
            }.joined()
        }
        func items(_ findings: [CheckFinding]) -> String {
            "<ul class=\"findings\">" + findings.map { finding in
                let place = report.findingPlaces[finding.identity].map { place in
                    " <button type=\"button\" class=\"to-map\" data-x=\"\(fmt(MapProjection.x(place.longitude)))\" data-y=\"\(fmt(MapProjection.y(place.latitude)))\">on the map</button>"
                } ?? ""
                return "<li class=\"finding \(finding.severity.rawValue)\(finding.waived ? " waived" : "")\" data-rule=\"\(finding.rule.rawValue)\">"
                    + "<b>\(finding.severity.rawValue)</b> <code>\(finding.table) \(escape(finding.key))</code> <code>\(finding.rule.rawValue)</code> "
                    + escape(finding.message) + (finding.waived ? " <em>(waived)</em>" : "") + place + "</li>"
            }.joined() + "</ul>"
        }
        var html = "<h3>Introduced by version \(report.summary.version) (\(report.introducedFindings.total))</h3>"
        html += report.introducedFindings.isEmpty ? "<p>None: this version brings no new finding.</p>" : list(report.introducedFindings)
        html += "<details><summary>Already there before (\(report.inheritedFindings.total))</summary>\(list(report.inheritedFindings))</details>"
        return html
    }

    /// What the version decided beside its rows: the revert it is, each conflict's decision,
    /// each adoption, and the curated values it kept (counted, the first listed).
    private static func merge(_ report: ReviewReport) -> String {
        let merge = report.merge
        var html = ""
        if let reverted = merge.reverts {
            html += "<p id=\"reverts\">Reverts version \(reverted): every row it changed put back, unless decided otherwise below.</p>"
        }
        func list(_ id: String, _ title: String, _ notes: [MergeNote]) -> String {
            guard !notes.isEmpty else { return "" }
            return "<h3>\(title)</h3><ul id=\"\(id)\">" + notes.map { "<li data-outcome=\"\($0.outcome.rawValue)\">\(escape($0.description))</li>" }.joined() + "</ul>"
        }
        html += list("merge-decided", "Conflicts decided (\(merge.decided.count))", merge.decided)
        html += list("merge-adopted", "Provisional rows adopted for upstream's (\(merge.adopted.count))", merge.adopted)
        if merge.keptCount > 0 {
            html += list("merge-kept", "Curated values kept where upstream's file says otherwise (\(merge.keptCount))", merge.kept)
            if merge.keptCount > merge.kept.count {
                html += "<p>The first \(merge.kept.count); <code>\(escape(CommandHint("log", "--key", "KEY").description))</code> shows a row's notes.</p>"
            }
        }
        if merge.reverts == nil && merge.decided.isEmpty && merge.adopted.isEmpty && merge.keptCount == 0 { html += "<p>None.</p>" }
        return html
    }

    private static func suggestions(_ suggestions: [SplitSuggestion]) -> String {
        guard !suggestions.isEmpty else { return "<p>None: no station of this version looks like a split or a handover.</p>" }
        return "<ul class=\"suggestions\">" + suggestions.map { suggestion in
            "<li><b>\(String(format: "%.2f", suggestion.confidence))</b> \(suggestion.old) \(escape(suggestion.oldName)) → "
                + "\(suggestion.new) \(escape(suggestion.newName)): \(escape(suggestion.reason))<br><code>\(escape(suggestion.planLine))</code></li>"
        }.joined() + "</ul>"
    }

    private static func pinMap(_ map: PinMap) -> String {
        let extent = map.extent
        let width = PinMap.width, height = extent.pixelHeight(width: width)
        func position(_ place: [Double]) -> (x: String, y: String) {
            let pixel = extent.pixel(latitude: place[0], longitude: place[1], width: width)
            return (fmt((pixel.x * 10).rounded() / 10), fmt((pixel.y * 10).rounded() / 10))
        }
        // One path of a square per dot, not an element each: at 1M stations the three maps have
        // 84,000 dots, which as <rect>s were 4.3 MB and most of the time a browser took to open the page.
        var dots = ""
        for station in map.stations {
            let (x, y) = position(station)
            dots += "M\(x) \(y)h1.2v1.2h-1.2z"
        }
        var pins = ""
        for pin in map.pins {
            let weight = Int(pin[2]), (x, y) = position(pin)
            let colour = weight <= 9 ? "#c62828" : weight == 11 ? "#ef6c00" : weight == 12 ? "#1565c0" : "#455a64"
            pins += "<circle class=\"pin\" data-weight=\"\(weight)\" cx=\"\(x)\" cy=\"\(y)\" r=\"3\" fill=\"\(colour)\"/>"
        }
        let spread = map.spread
        return """
            <figure class="pin-map" data-extent="\(escape(extent.name))">
            <svg viewBox="0 0 \(fmt(width)) \(fmt(height))" role="img" aria-label="Top pins over \(escape(extent.name))"><path class="dots" d="\(dots)"/>\(pins)</svg>
            <figcaption><b>\(escape(extent.name))</b>: \(map.pins.count) pins of \(spread.stationsInView) stations reach \
            \(spread.coveredByWeight) of the \(spread.cellsWithStations) occupied cells of an 8 × 8 grid \
            (\(spread.coveredWithoutWeights) by distance alone).<br>\
            <span class="w w1">■ 1–9</span> <span class="w w11">■ 11</span> <span class="w w12">■ 12</span> <span class="w w13">■ 13</span></figcaption>
            </figure>
            """
    }

    // MARK: Text

    /// The five characters HTML gives meaning to, in text and attribute values.
    package static func escape(_ text: String) -> String {
        var escaped = ""
        escaped.reserveCapacity(text.count)
        for character in text {
            switch character {
            case "&": escaped += "&amp;"
            case "<": escaped += "&lt;"
            case ">": escaped += "&gt;"
            case "\"": escaped += "&quot;"
            case "'": escaped += "&#39;"
            default: escaped.append(character)
            }
        }
        return escaped.escapingControlCharacters
    }

    package static func fmt(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : String(value)
    }

    private static let style = """
        :root { --ink: #1f2933; --muted: #66788a; --line: #d9e2ec; --paper: #fbfcfd; }
        * { box-sizing: border-box; }
        body { margin: 0; font: 14px/1.5 system-ui, -apple-system, "Hiragino Sans", "Noto Sans CJK JP", sans-serif; color: var(--ink); background: var(--paper); }
        header { padding: 16px 24px 8px; border-bottom: 1px solid var(--line); background: #fff; }
        h1 { margin: 0; font-size: 22px; } h1 small { font-weight: normal; color: var(--muted); font-size: 16px; margin-left: 8px; }
        h2 { font-size: 17px; margin: 24px 0 8px; } h3 { font-size: 15px; margin: 12px 0 4px; }
        .meta { margin: 4px 0 0; color: var(--muted); }
        main { padding: 0 24px 40px; max-width: 1400px; }
        table { border-collapse: collapse; background: #fff; }
        th, td { border: 1px solid var(--line); padding: 3px 8px; text-align: left; vertical-align: top; }
        table.counts td { text-align: right; font-variant-numeric: tabular-nums; }
        .map-wrap { position: relative; border: 1px solid var(--line); background: #f4f7fa; }
        #change-map { width: 100%; height: 72vh; display: block; cursor: grab; touch-action: none; }
        #change-map.dragging { cursor: grabbing; }
        .network { fill: none; stroke: #9fb3c8; stroke-width: 1; vector-effect: non-scaling-stroke; }
        .link { stroke-width: 2; vector-effect: non-scaling-stroke; stroke-dasharray: 4 3; }
        .link.duplicate { stroke-dasharray: none; stroke-width: 2.5; }
        .marker { stroke: #fff; stroke-width: 1.2; vector-effect: non-scaling-stroke; cursor: pointer; opacity: .92; }
        .finding-mark { fill: none; stroke: #b26a00; stroke-width: 2; vector-effect: non-scaling-stroke; stroke-dasharray: 3 2; }
        .finding-mark.error { stroke: #c62828; }
        .labels { display: none; } #change-map.zoomed .labels { display: inline; }
        .label { fill: var(--ink); paint-order: stroke; stroke: #fff; stroke-width: 3px; stroke-linejoin: round; vector-effect: non-scaling-stroke; pointer-events: none; }
        .verdict { margin: 16px 0 0; padding: 12px 16px; border-radius: 6px; border: 2px solid; background: #fff; }
        .verdict.releasable { border-color: #1b8a3a; } .verdict.refused { border-color: #c62828; }
        .verdict h2 { margin: 0 0 6px; } .verdict.releasable h2 { color: #1b8a3a; } .verdict.refused h2 { color: #c62828; }
        .verdict ul { margin: 4px 0; } .verdict h3 { margin: 8px 0 2px; }
        #findings .findings { max-height: 220px; overflow: auto; }
        .to-map { font-size: 11px; margin-left: 6px; cursor: pointer; }
        .marker.selected { stroke: #000; stroke-width: 3; }
        .map-buttons { position: absolute; top: 8px; left: 8px; display: flex; flex-direction: column; gap: 4px; }
        .map-buttons button { width: 32px; height: 32px; font-size: 18px; border: 1px solid var(--line); background: #fff; border-radius: 4px; cursor: pointer; }
        #marker-detail { position: absolute; right: 8px; bottom: 8px; max-width: 460px; background: rgba(255,255,255,.95); border: 1px solid var(--line); border-radius: 4px; padding: 8px 12px; }
        .legend { display: flex; flex-wrap: wrap; gap: 14px; margin-bottom: 6px; }
        .legend label { cursor: pointer; } .legend small { color: var(--muted); }
        .swatch { display: inline-block; width: 13px; height: 13px; margin: 0 4px 0 2px; vertical-align: -2px; }
        .filters { display: flex; gap: 16px; align-items: center; margin-bottom: 8px; }
        #filter-count { color: var(--muted); }
        table.changes { width: 100%; } table.changes td.key { white-space: nowrap; font-variant-numeric: tabular-nums; }
        .kind { font-size: 11px; font-weight: 600; padding: 1px 6px; border-radius: 3px; background: #e4e7eb; }
        .kind.insert { background: #d3f0dc; } .kind.delete { background: #f8d7d7; } .kind.restore { background: #d0f0f3; }
        .kind.update { background: #fde8cf; } .kind.duplicate { background: #f9d6e6; }
        .findings { padding-left: 18px; } .finding.error b { color: #c62828; } .finding.warning b { color: #b26a00; }
        .finding.waived { opacity: .6; }
        .pin-maps { display: flex; flex-wrap: wrap; gap: 16px; }
        .pin-map { margin: 0; width: 320px; } .pin-map svg { width: 300px; background: #fff; border: 1px solid var(--line); }
        .pin-map .dots { fill: #b8c4ce; }
        .pin { stroke: #fff; stroke-width: .6; }
        .w1 { color: #c62828; } .w11 { color: #ef6c00; } .w12 { color: #1565c0; } .w13 { color: #455a64; }
        code { font-size: 12px; background: #eef2f6; padding: 0 3px; border-radius: 3px; }
        """

    private static let script = """
        (function () {
          const svg = document.getElementById('change-map');
          const home = svg.getAttribute('data-home').split(' ').map(Number);
          let box = home.slice();
          const labelWidth = Number(svg.getAttribute('data-label-width'));
          function draw() {
            svg.setAttribute('viewBox', box.join(' '));
            const unit = Math.max(box[2] / svg.clientWidth, box[3] / svg.clientHeight);
            svg.querySelectorAll('.marker, .finding-mark').forEach(function (m) {
              m.setAttribute('transform', 'translate(' + m.dataset.x + ' ' + m.dataset.y + ') scale(' + unit * 6 + ')');
            });
            // Names once zoomed in: at all Japan they would cover the map.
            svg.classList.toggle('zoomed', box[2] <= labelWidth);
            svg.querySelectorAll('.label').forEach(function (t) {
              t.setAttribute('font-size', unit * 12);
              t.setAttribute('dx', unit * 9);
              t.setAttribute('dy', unit * 4);
            });
          }
          function focus(x, y) {
            const width = Math.min(box[2], 60), height = width * box[3] / box[2];
            box = [x - width / 2, y - height / 2, width, height];
            draw();
            svg.scrollIntoView({ block: 'center' });
          }
          document.querySelectorAll('.to-map').forEach(function (button) {
            button.addEventListener('click', function () { focus(Number(button.dataset.x), Number(button.dataset.y)); });
          });
          function zoom(factor, cx, cy) {
            const w = box[2] * factor, h = box[3] * factor;
            box = [cx - (cx - box[0]) * factor, cy - (cy - box[1]) * factor, w, h];
            draw();
          }
          function toMap(event) {
            const r = svg.getBoundingClientRect();
            const scale = Math.max(box[2] / r.width, box[3] / r.height);
            const offsetX = (r.width * scale - box[2]) / 2, offsetY = (r.height * scale - box[3]) / 2;
            return [box[0] - offsetX + (event.clientX - r.left) * scale, box[1] - offsetY + (event.clientY - r.top) * scale, scale];
          }
          svg.addEventListener('wheel', function (event) {
            event.preventDefault();
            const p = toMap(event);
            zoom(event.deltaY < 0 ? 0.8 : 1.25, p[0], p[1]);
          }, { passive: false });
          let drag = null;
          svg.addEventListener('pointerdown', function (event) {
            if (event.target.closest('.marker')) return;
            drag = { x: event.clientX, y: event.clientY, box: box.slice(), scale: toMap(event)[2] };
            svg.classList.add('dragging');
            svg.setPointerCapture(event.pointerId);
          });
          svg.addEventListener('pointermove', function (event) {
            if (!drag) return;
            box = [drag.box[0] - (event.clientX - drag.x) * drag.scale, drag.box[1] - (event.clientY - drag.y) * drag.scale, box[2], box[3]];
            draw();
          });
          svg.addEventListener('pointerup', function () { drag = null; svg.classList.remove('dragging'); });
          document.querySelectorAll('[data-zoom]').forEach(function (button) {
            button.addEventListener('click', function () {
              const kind = button.getAttribute('data-zoom');
              if (kind === 'reset') { box = home.slice(); draw(); return; }
              zoom(kind === 'in' ? 0.6 : 1 / 0.6, box[0] + box[2] / 2, box[1] + box[3] / 2);
            });
          });
          const detail = document.getElementById('marker-detail');
          svg.addEventListener('click', function (event) {
            const marker = event.target.closest('.marker');
            if (!marker) return;
            svg.querySelectorAll('.marker.selected').forEach(function (m) { m.classList.remove('selected'); });
            marker.classList.add('selected');
            detail.textContent = marker.getAttribute('data-station') + ' · ' + marker.getAttribute('data-kind') + ' · ' + marker.getAttribute('data-text');
          });
          document.querySelectorAll('[data-legend]').forEach(function (box) {
            box.addEventListener('change', function () {
              const kind = box.getAttribute('data-legend');
              svg.querySelectorAll('[data-kind="' + kind + '"], [data-link="' + kind + '"], .label[data-station]').forEach(function (m) {
                if (m.classList.contains('label')) {
                  const marker = svg.querySelector('.marker[data-station="' + m.dataset.station + '"]');
                  if (!marker || marker.dataset.kind !== kind) return;
                }
                m.style.display = box.checked ? '' : 'none';
              });
            });
          });
          const rows = Array.from(document.querySelectorAll('tr.change'));
          const table = document.getElementById('filter-table'), kind = document.getElementById('filter-kind');
          const text = document.getElementById('filter-text'), count = document.getElementById('filter-count');
          function filter() {
            let shown = 0;
            const needle = text.value.trim().toLowerCase();
            rows.forEach(function (row) {
              const visible = (!table.value || row.dataset.table === table.value) && (!kind.value || row.dataset.kind === kind.value)
                && (!needle || row.textContent.toLowerCase().indexOf(needle) >= 0);
              row.style.display = visible ? '' : 'none';
              if (visible) shown += 1;
            });
            count.textContent = shown + ' of ' + rows.length;
          }
          [table, kind].forEach(function (e) { e.addEventListener('change', filter); });
          text.addEventListener('input', filter);
          draw();
          document.body.setAttribute('data-ready', 'true');
        })();
        """
}
