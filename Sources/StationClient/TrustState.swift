import Foundation
import StationSignatures

/// What a phone remembers of the manifests it accepted, beside its database
/// (`phone.sqlite.trust.json`): the highest sequence (no rollback), the newest `published_at`
/// (the floor of its clock) and the dataset (pinned at the first acceptance when the app names none).
struct TrustState: Codable, Equatable {
    var sequence = 0
    var publishedAt: String?
    var dataset: String?

    enum CodingKeys: String, CodingKey { case sequence, publishedAt = "published_at", dataset }

    static func path(for database: String) -> String { database + ".trust.json" }

    static func load(for database: String) -> TrustState {
        guard let data = FileManager.default.contents(atPath: path(for: database)),
              let state = try? JSONDecoder().decode(TrustState.self, from: data) else { return TrustState() }
        return state
    }

    func save(for database: String) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        try encoder.encode(self).write(to: URL(fileURLWithPath: Self.path(for: database)), options: .atomic)
    }

    var publishedAtDate: Date? {
        publishedAt.flatMap { ISO8601DateFormatter().date(from: $0) }
    }
}
