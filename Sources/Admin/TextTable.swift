/// The one way `station-admin` prints a table: columns padded to their widest cell (wide CJK
/// characters count twice, as a terminal draws them), text left-aligned, numbers right-aligned.
struct TextTable {
    enum Alignment { case left, right }

    var header: [String]?
    var rows: [[String]] = []
    /// Per column; missing columns: the first left, the rest right.
    var alignments: [Alignment] = []
    var indent = ""
    var separator = "  "

    init(header: [String]? = nil, alignments: [Alignment] = [], indent: String = "") {
        self.header = header
        self.alignments = alignments
        self.indent = indent
    }

    mutating func append(_ row: [String]) { rows.append(row) }

    var lines: [String] {
        let all = (header.map { [$0] } ?? []) + rows
        let columns = all.map(\.count).max() ?? 0
        let widths = (0..<columns).map { column in all.map { $0.count > column ? Self.width($0[column]) : 0 }.max() ?? 0 }
        return all.map { row in
            indent + row.enumerated().map { column, cell in
                let padding = String(repeating: " ", count: widths[column] - Self.width(cell))
                let alignment = column < alignments.count ? alignments[column] : (column == 0 ? .left : .right)
                if alignment == .left { return column == row.count - 1 ? cell : cell + padding }
                return padding + cell
            }.joined(separator: separator)
        }
    }

    func print() { for line in lines { Console.line(line) } }

    /// Terminal columns: East Asian wide and fullwidth characters take two.
    static func width(_ text: String) -> Int {
        text.unicodeScalars.reduce(0) { total, scalar in
            switch scalar.value {
            case 0x1100...0x115F, 0x2E80...0xA4CF, 0xAC00...0xD7A3, 0xF900...0xFAFF, 0xFE30...0xFE4F, 0xFF00...0xFF60, 0xFFE0...0xFFE6,
                 0x20000...0x3FFFD:
                return total + 2
            case 0x0300...0x036F, 0x200B...0x200F:
                return total
            default:
                return total + 1
            }
        }
    }
}
