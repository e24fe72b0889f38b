/// Bytes as lowercase hex, the form of every SHA-256 and key id in a manifest.
public enum Hex {
    /// `bytes` as lowercase hex, two digits a byte.
    public static func string(_ bytes: some Sequence<UInt8>) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }
}
