/// Text as a terminal shows it: a name from the data can hold any character, and a CR, a
/// newline or an escape sequence in it must not forge log lines or redraw the screen.
/// JSON output keeps the exact value; only text output goes through here.
extension String {
    /// Control characters shown as escapes: `\n`, `\r`, `\t`, `\0`, others as `\u{1B}`.
    ///
    /// For example `"大湊\r\n2019-01-01  INSERT stations 1"` shows as
    /// `大湊\r\n2019-01-01  INSERT stations 1`, on one line.
    public var escapingControlCharacters: String {
        guard unicodeScalars.contains(where: \.isControlForDisplay) else { return self }
        var escaped = ""
        for scalar in unicodeScalars {
            switch scalar {
            case "\n": escaped += "\\n"
            case "\r": escaped += "\\r"
            case "\t": escaped += "\\t"
            case "\0": escaped += "\\0"
            case _ where scalar.isControlForDisplay: escaped += "\\u{\(String(scalar.value, radix: 16, uppercase: true))}"
            default: escaped.unicodeScalars.append(scalar)
            }
        }
        return escaped
    }

    /// A value quoted for an error message: escaped, and cut after `limit` characters, so that
    /// a bad 1 MB field does not print a megabyte back.
    ///
    /// For example a 1,000,000-character field shows as `"xxxx…" (1000000 bytes)`.
    public func quotedForMessage(limit: Int = 80) -> String {
        let shown = count > limit ? String(prefix(limit)).escapingControlCharacters + "…" : escapingControlCharacters
        return "\"\(shown)\"" + (count > limit ? " (\(utf8.count) bytes)" : "")
    }
}

extension Unicode.Scalar {
    /// C0 and C1 controls, DEL, and the line and paragraph separators.
    package var isControlForDisplay: Bool {
        value < 0x20 || (0x7F...0x9F).contains(value) || value == 0x2028 || value == 0x2029
    }
}
