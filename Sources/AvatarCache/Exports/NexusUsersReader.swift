/// Reads a NexusAI users export: a JSON array, `{"users": [...]}` or NDJSON, with
/// `id`, `displayName`, `email`, `profileImageUrl` and optional `avatarColorHex`.
///
/// An absent or empty `profileImageUrl` is not an error: that user gets a monogram.
public struct NexusUsersReader: ExportReader {
    public let path: String
    public let limits: ReaderLimits

    public init(path: String, limits: ReaderLimits = ReaderLimits()) {
        self.path = path
        self.limits = limits
    }

    struct Record: Decodable {
        var id: FlexibleID
        var displayName: String?
        var email: String?
        var profileImageUrl: String?
        var avatarColorHex: String?
    }

    public func read(_ body: (ExportItem) throws -> Void) throws {
        try JSONRecordDecoding<Record>(path: path, recordsKey: "users", limits: limits).forEach { result, bad in
            switch result {
            case .failure(let bad):
                try body(.bad(bad))
            case .success(let user):
                guard !user.id.value.isEmpty else {
                    try body(.bad(bad("\"id\" is empty")))
                    return
                }
                let url = user.profileImageUrl?.trimmingCharacters(in: .whitespacesAndNewlines)
                try body(.profile(Profile(
                    id: user.id.value,
                    displayName: user.displayName ?? "",
                    photo: (url?.isEmpty ?? true) ? nil : .url(url!, sendMonicaToken: false),
                    colorHex: user.avatarColorHex
                )))
            }
        }
    }
}

import Foundation
