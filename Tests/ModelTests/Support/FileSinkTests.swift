import Foundation
import StationSupport
import Testing

/// A file sink closes its file once: a second `finish` (a caller finishing what a printer already
/// finished) does nothing, a write after it is refused, and a sink dropped unfinished still closes
/// its file with its bytes in it.
@Suite struct FileSinkTests {
    let scratch = Scratch()

    @Test func finishingTwiceClosesOnceAndAWriteAfterIsRefused() throws {
        let path = scratch.path("twice.txt")
        let sink = try FileSink(path: path)
        try sink.write("one\n")
        try sink.finish()
        try sink.finish()
        #expect(throws: FileError.self) { try sink.write("two\n") }
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "one\n")
    }

    @Test func aSinkDroppedUnfinishedClosesItsFile() throws {
        let path = scratch.path("dropped.txt")
        do {
            let sink = try FileSink(path: path)
            try sink.write("kept\n")
        }
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "kept\n")
    }
}
