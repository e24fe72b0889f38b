import Foundation
import StationCheck
import StationDelta
import StationImport
import StationLog
import StationRelease
import StationReview
import StationSchema
import StationSupport
import StationVersion
import Testing

/// Every change of an import listed through a file, whatever `describeLimit` says: the way
/// `import --json` and `diff` list two million changes without holding them.
@Suite struct ChangeListingTests {
    let scratch = Scratch()

    @Test func aChangeFileGivesBackWhatWasAppendedInOrder() throws {
        let file = try DescribedChangeFile(directory: scratch.url.path)
        // Past the 1 MiB write buffer several times, with one change larger than it.
        var appended: [DescribedChange] = []
        for index in 0..<20_000 {
            let fields = (0..<index % 4).map { column in
                FieldChange(column: "c\(column)", old: column == 1 ? nil : "旧\(index)", new: column == 2 ? nil : "new,\"\n\t\(index)")
            }
            appended.append(DescribedChange(
                table: MasterTable.all[index % MasterTable.all.count].name, key: index % 7 == 0 ? "" : "\(index)/\(index * 3)",
                kind: Update.Kind.allCases[index % Update.Kind.allCases.count], name: index % 3 == 0 ? nil : "駅\(index)", fields: fields))
        }
        appended.insert(DescribedChange(
            table: "stations", key: "1", kind: .update, name: String(repeating: "長", count: 700_000), fields: []), at: 10_001)
        for change in appended { try file.append(change) }

        var read: [DescribedChange] = []
        try file.forEach { read.append($0) }
        #expect(file.count == appended.count)
        #expect(read == appended)
        // Read twice, and more appended after a read.
        try file.append(appended[5])
        var again: [DescribedChange] = []
        try file.forEach { again.append($0) }
        #expect(again == appended + [appended[5]])
        // Nothing is left in the folder, even while the file is open.
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.url.path).isEmpty)
    }

    @Test func anImportListsEveryChangeWhateverItsLimitSays() throws {
        let database = try scratch.baseDatabase()
        let snapshot = try scratch.snapshot()
        try snapshot.replace("station.csv", "陸奥市川", with: "陸奥市川駅")
        try snapshot.removeLine("join.csv", containing: "11201,1120103,1120104")
        try snapshot.removeLine("station.csv", containing: "1120105")
        let whole = try Importer(database).diff([snapshot.path])
        #expect(whole.changes.count == whole.totalChanges && whole.totalChanges == 3)
        // A connection's DELETE changes no column: an empty list of fields.
        #expect(whole.changes.contains { $0.table == "connections" && $0.kind == .delete && $0.fields.isEmpty })

        let listed = try DescribedChangeFile()
        let report = try Importer(database).importSnapshot([snapshot.path], options: ImportOptions(describeLimit: 2), listingEveryChangeIn: listed)
        var every: [DescribedChange] = []
        try listed.forEach { every.append($0) }
        #expect(every == whole.changes)
        #expect(report.changes == Array(whole.changes.prefix(2)))
        #expect(report.totalChanges == whole.totalChanges && report.findings == whole.findings)
    }

    @Test func anImportThatCannotListItsChangesSaysWhereAndCommitsNothing() throws {
        let database = try scratch.baseDatabase()
        let snapshot = try scratch.snapshot()
        try snapshot.replace("station.csv", "陸奥市川", with: "陸奥市川駅")
        let missing = scratch.path("no-such-folder")
        let result = try CommandRunner.run(["import", snapshot.path, "--json", "--db", database.path], environment: ["TMPDIR": missing])
        #expect(result.status != 0 && result.stdout.isEmpty)
        #expect(result.stderr.contains("cannot create a temporary file in \(missing) for the list of changes: no such file or directory (set TMPDIR to a folder with room)"))
        #expect(try database.dataVersion() == 1)
    }

}
