import Foundation
import StationSchema
import StationSupport

/// One CSV file to import, with the table its header names.
package struct ImportFile {
    package let path: String
    package let header: TableHeader
    package var table: MasterTable { header.table }
    package var displayName: String { path }
    /// The upstream snapshot's date, from the file's name (`SnapshotDate`), if it has one.
    package var dateInName: String? { SnapshotDate.fromFileName(path) }
}

/// Resolves the PATH arguments of `diff` and `import` into one file per table.
///
/// A folder means every `*.csv` directly in it; a file means itself. Files are told apart
/// by their header, so `station20210312free.csv` and `stations.csv` are the same to us.
package enum ImportSource {
    /// The files of `paths`, each recognised as a table of `declared`.
    package static func files(from paths: [String], _ declared: DeclaredSchema) throws -> [ImportFile] {
        var files: [ImportFile] = []
        for path in try csvPaths(from: paths) {
            let header = try readHeader(path, declared)
            if let other = files.first(where: { $0.table == header.table }) {
                throw InputError(.csv, file: path, line: 1,
                    message: "a second \(header.table.name) file (\(other.path) is one already; expected one file per table)")
            }
            files.append(ImportFile(path: path, header: header))
        }
        return files.sorted { MasterTable.all.firstIndex(of: $0.table)! < MasterTable.all.firstIndex(of: $1.table)! }
    }

    /// The CSV files of `paths`: a folder's `*.csv` directly in it, sorted; a file itself.
    package static func csvPaths(from paths: [String]) throws -> [String] {
        var csvPaths: [String] = []
        for path in paths {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
                throw InputError(.csv, file: path, line: nil, message: "no such file or folder")
            }
            if isDirectory.boolValue {
                let names = try FileManager.default.contentsOfDirectory(atPath: path)
                    .filter { $0.lowercased().hasSuffix(".csv") }.sorted()
                if names.isEmpty { throw InputError(.csv, file: path, line: nil, message: "no *.csv files in this folder") }
                csvPaths += names.map { (path as NSString).appendingPathComponent($0) }
            } else {
                csvPaths.append(path)
            }
        }
        return csvPaths
    }

    private static func readHeader(_ path: String, _ declared: DeclaredSchema) throws -> TableHeader {
        var fields: [String] = []
        let found = try CSVReader(path: path, displayName: path).firstRecord { record in
            fields = try record.fields.enumerated().map { position, bytes in
                guard let text = String(validating: bytes, as: UTF8.self) else {
                    throw InputError(.csv, file: path, line: record.line,
                        message: "field \(position + 1) of the header is not valid UTF-8 (the file may be Shift_JIS: convert it with `iconv -f SHIFT_JIS -t UTF-8 \(path) > converted.csv`)")
                }
                return text
            }
        }
        if found { return try TableHeader(fields: fields, file: path, declared) }
        throw InputError(.csv, file: path, line: nil, message: "empty file (expected a header line, then one row per record)")
    }
}
