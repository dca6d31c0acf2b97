/// Reads a NexusAI users export: a JSON array, `{"users": [...]}` or NDJSON, with
/// `id`, `displayName`, `email`, `profileImageUrl` and optional `avatarColorHex`.
///
/// An absent or empty `profileImageUrl` is not an error: that user gets a monogram. A
/// text field holding something else (a number as `profileImageUrl`, an object as
/// `displayName`) is reported with its line and read as absent; the user is kept.
public struct NexusUsersReader: ExportReader {
    public let path: String
    public let limits: ReaderLimits
    /// Where the people and their fields are, when not NexusAI's names.
    public let map: FieldMap

    public init(path: String, limits: ReaderLimits = ReaderLimits(), map: FieldMap = FieldMap()) {
        self.path = path
        self.limits = limits
        self.map = map
    }

    /// Whether the first records use NexusAI's names (or none of the others): then the
    /// fast reader below reads them. Otherwise (a field map, `photoURL` instead of
    /// `profileImageUrl`, records keyed by id) the field map's reader does.
    func nexusNamesFit() -> Bool {
        guard map.isEmpty, let stream = try? JSONRecordStream(path: path, recordsKey: "users", maxRecordBytes: limits.maxRecordBytes, membersAreRecords: true) else { return map.isEmpty }
        var samples: [DocumentFields] = []
        for record in stream.prefix(FieldChooser.sampleSize) {
            if record.key != nil { return false }
            guard case .success(let bytes) = record.bytes,
                  case .map(let fields)? = JSONDocumentValue.value(of: bytes) else { continue }
            samples.append(fields)
        }
        let photo = FieldChooser.field(FieldChooser.photoFields, in: samples)?.text
        let name = FieldChooser.field(FieldChooser.nameFields, in: samples)?.text
        return (photo == nil || photo == "profileImageUrl") && (name == nil || name == "displayName" || photo == "profileImageUrl")
    }

    struct Record: Decodable, FastJSONRecord {
        var id: FlexibleID
        var displayName: String?
        var email: String?
        var profileImageUrl: String?
        var avatarColorHex: String?
        /// Fields that held something other than text.
        var problems: [(field: String, found: String)] = []

        enum CodingKeys: String, CodingKey {
            case id, displayName, email, profileImageUrl, avatarColorHex
        }

        init(id: FlexibleID) { self.id = id }

        init(from decoder: Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            id = try container.decode(FlexibleID.self, forKey: .id)
            displayName = try container.lenientString(.displayName, &problems)
            email = try container.lenientString(.email, &problems)
            profileImageUrl = try container.lenientString(.profileImageUrl, &problems)
            avatarColorHex = try container.lenientString(.avatarColorHex, &problems)
        }

        static func read(_ reader: inout JSONReader) throws -> Record? {
            var id: FlexibleID?
            var record = Record(id: FlexibleID(value: ""))
            try reader.members { reader, key in
                if key == Keys.id { id = try FlexibleID.read(&reader) }
                else if key == Keys.displayName { record.displayName = try reader.optionalString() }
                else if key == Keys.email { record.email = try reader.optionalString() }
                else if key == Keys.profileImageUrl { record.profileImageUrl = try reader.optionalString() }
                else if key == Keys.avatarColorHex { record.avatarColorHex = try reader.optionalString() }
                else { try reader.skipValue() }
            }
            guard let id else { return nil }
            record.id = id
            return record
        }

        /// The keys the fast reader knows, as bytes.
        private enum Keys {
            static let id = Array("id".utf8)
            static let displayName = Array("displayName".utf8)
            static let email = Array("email".utf8)
            static let profileImageUrl = Array("profileImageUrl".utf8)
            static let avatarColorHex = Array("avatarColorHex".utf8)
        }
    }

    public func read(_ body: (ExportItem) throws -> Void) throws {
        guard nexusNamesFit() else {
            let key = map.names(.users)?.first ?? "users"
            try MappedPeopleReader(path: path, source: .json(path: path, recordsKey: key), map: map, limits: limits).read(body)
            return
        }
        try JSONRecordDecoding<Record>(path: path, recordsKey: "users", limits: limits).forEach { result, bad in
            switch result {
            case .failure(let bad):
                try body(.bad(bad))
            case .success(let user):
                guard !user.id.value.isEmpty else {
                    try body(.bad(bad("\"id\" is empty")))
                    return
                }
                for problem in user.problems {
                    try body(.bad(bad("user \"\(user.id.value)\": field \"\(problem.field)\": expected a string, found \(problem.found): read as absent, the user is kept",
                                      field: problem.field)))
                }
                let url = user.profileImageUrl?.trimmedWhitespace
                var profile = Profile(
                    id: user.id.value,
                    displayName: user.displayName ?? "",
                    photo: (url?.isEmpty ?? true) ? nil : .url(url!, sendMonicaToken: false),
                    colorHex: user.avatarColorHex
                )
                profile.origin = bad.origin
                try body(.profile(profile))
            }
        }
    }
}

import AvatarCacheJSON
import AvatarCacheModel
import Foundation

extension ExportFormat {
    public static let nexusUsers = NexusUsersReader.format
}

extension NexusUsersReader: ExportFormatReader {
    public static let name = "nexus-users"
    public static let summary = "NexusAI users (JSON, NDJSON); other apps' with --map"
    public static let evidence = "\"profileImageUrl\", \"displayName\" or \"users\""

    public static func recognises(_ sample: ExportSample) throws -> Bool {
        guard !sample.isFolder else { return false }
        return try sample.hasKey("profileImageUrl") || sample.hasKey("displayName") || sample.hasKey("users")
    }

    public static func reader(path: String, limits: ReaderLimits, map: FieldMap) -> any ExportReader {
        NexusUsersReader(path: path, limits: limits, map: map)
    }
}
