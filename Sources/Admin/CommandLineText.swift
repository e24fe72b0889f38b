import Foundation

/// Arguments arrive as bytes; Swift would turn invalid UTF-8 into U+FFFD silently, and a
/// name with U+FFFD would reach every phone.
enum CommandLineText {
    struct InvalidArgument: Error, LocalizedError {
        let position: Int
        var errorDescription: String? {
            "argument \(position) is not valid UTF-8 (expected UTF-8 text; convert it, e.g. with `iconv -f SHIFT_JIS -t UTF-8`)"
        }
    }

    static func requireUTF8() throws {
        for position in 1..<Int(CommandLine.argc) {
            guard let argument = CommandLine.unsafeArgv[position] else { continue }
            let bytes = UnsafeBufferPointer(start: UnsafeRawPointer(argument).assumingMemoryBound(to: UInt8.self), count: strlen(argument))
            if String(validating: bytes, as: UTF8.self) == nil { throw InvalidArgument(position: position) }
        }
    }
}
