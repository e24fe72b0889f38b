import GRDB

/// The master tables as one build of the code declares them: client schema 1's tables with the
/// columns of its `ClientSchemaChange`s, the changes' indexes and migrations, and the client
/// schema version it builds. The tool and the apps' releases use `shipped`; a test makes one
/// with a test-only change and opens a master with it, to see a column reach every phone.
///
/// Every reader of a table's columns takes them from the schema it was handed (a
/// `MasterDatabase`'s, or an argument), never from a global: two masters open in one process
/// can be under two schemas, as a test and the binary after an upgrade are.
public struct DeclaredSchema: Sendable {
    /// The client schema changes, oldest first.
    public let changes: [ClientSchemaChange]
    /// The tables in dependency order (prefectures first), with the changes' columns.
    public let tables: [MasterTable]

    /// This code's schema: `ClientSchema.shipped`'s changes.
    public static let shipped = DeclaredSchema(changes: ClientSchema.shipped)

    /// The shipped schema and `testChanges` after it: a test's own column.
    package static func shipped(plus testChanges: [ClientSchemaChange]) -> DeclaredSchema {
        DeclaredSchema(changes: ClientSchema.shipped + testChanges)
    }

    private init(changes: [ClientSchemaChange]) {
        self.changes = changes
        tables = MasterTable.all.map { table in
            table.adding(changes.flatMap { change in change.columns.filter { $0.table == table.name }.map(\.column) })
        }
    }

    /// The client schema version this code builds: 1 plus one per change.
    public var clientSchema: Int { changes.last?.version ?? 1 }

    /// `table` with this schema's columns.
    public subscript(_ table: MasterTable) -> MasterTable { tables[MasterTable.all.firstIndex(of: table)!] }

    /// The table called `name`, with this schema's columns, if there is one.
    public func table(named name: String) -> MasterTable? { tables.first { $0.name == name } }

    /// `MasterTable.prefectures` with this schema's columns.
    public var prefectures: MasterTable { self[.prefectures] }
    /// `MasterTable.companies` with this schema's columns.
    public var companies: MasterTable { self[.companies] }
    /// `MasterTable.lines` with this schema's columns.
    public var lines: MasterTable { self[.lines] }
    /// `MasterTable.stations` with this schema's columns.
    public var stations: MasterTable { self[.stations] }
    /// `MasterTable.connections` with this schema's columns.
    public var connections: MasterTable { self[.connections] }
}
