import Foundation

/// Reads a Monica contacts export: API v1 pages `{"data": [...]}` (one file a page),
/// each contact with `id`, `first_name`, `last_name` and
/// `information.avatar {url, source, default_avatar_color}`.
///
/// - `default`: no download, a monogram in `default_avatar_color`;
/// - `gravatar`: downloaded without the token;
/// - `photo`: downloaded with the Monica token (sent to the Monica host only);
/// - `adorable`: a `data:` URL, decoded inline;
/// - anything else (unknown source, null avatar, no `information`): reported, monogram.
public struct MonicaReader: ExportReader {
    public let path: String
    public let limits: ReaderLimits

    public init(path: String, limits: ReaderLimits = ReaderLimits()) {
        self.path = path
        self.limits = limits
    }

    struct Contact: Decodable {
        var id: FlexibleID
        var first_name: String?
        var last_name: String?
        var complete_name: String?
        var information: Information?

        struct Information: Decodable {
            var avatar: Avatar?
        }

        struct Avatar: Decodable {
            var url: String?
            var source: String?
            var default_avatar_color: String?
        }
    }

    public func read(_ body: (ExportItem) throws -> Void) throws {
        try JSONRecordDecoding<Contact>(path: path, recordsKey: "data", limits: limits).forEach { result, bad in
            let contact: Contact
            switch result {
            case .failure(let record):
                try body(.bad(record))
                return
            case .success(let value):
                contact = value
            }
            guard !contact.id.value.isEmpty else {
                try body(.bad(bad("\"id\" is empty")))
                return
            }
            let name = [contact.first_name, contact.last_name]
                .compactMap { $0?.trimmingCharacters(in: .whitespacesAndNewlines) }
                .filter { !$0.isEmpty }.joined(separator: " ")
            var profile = Profile(
                id: contact.id.value,
                displayName: name.isEmpty ? (contact.complete_name ?? "") : name,
                initials: Initials.from(firstName: contact.first_name, lastName: contact.last_name),
                colorHex: contact.information?.avatar?.default_avatar_color
            )
            if let color = contact.information?.avatar?.default_avatar_color, profile.colorHex == nil {
                try body(.bad(bad("default_avatar_color \"\(color.prefix(40))\" is not #RRGGBB; a palette colour is used")))
            }
            guard let avatar = contact.information?.avatar else {
                try body(.bad(bad(contact.information == nil ? "no \"information\": monogram used" : "no avatar: monogram used")))
                try body(.profile(profile))
                return
            }
            let url = avatar.url?.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
            switch avatar.source?.lowercased() {
            case "default":
                break
            case "gravatar", "photo":
                if url.isEmpty {
                    try body(.bad(bad("\(avatar.source!) avatar without a url: monogram used")))
                } else {
                    profile.photo = .url(url, sendMonicaToken: avatar.source?.lowercased() == "photo")
                }
            case "adorable":
                do {
                    profile.photo = .inline(InlinePhoto(bytes: try DataURL.decode(url, maxBytes: limits.maxInlineBytes)))
                } catch let error as DataURL.Error {
                    try body(.bad(bad("adorable avatar: \(error.description): monogram used")))
                }
            case let other:
                try body(.bad(bad("unknown avatar source \(other.map { "\"\($0.prefix(40))\"" } ?? "(none)"): monogram used")))
            }
            try body(.profile(profile))
        }
    }
}

/// `data:[<media type>][;base64],<data>` URLs, bounded in size.
public enum DataURL {
    public struct Error: Swift.Error, CustomStringConvertible {
        public var description: String
    }

    public static func decode(_ text: String, maxBytes: Int) throws -> [UInt8] {
        guard text.lowercased().hasPrefix("data:") else { throw Error(description: "not a data: URL") }
        guard let comma = text.firstIndex(of: ",") else { throw Error(description: "data: URL without a comma") }
        let header = text[text.index(text.startIndex, offsetBy: 5)..<comma].lowercased()
        let payload = text[text.index(after: comma)...]
        guard payload.utf8.count <= maxBytes / 3 * 4 + 4 else {
            throw Error(description: "data: URL larger than \(maxBytes) bytes")
        }
        if header.hasSuffix(";base64") {
            guard let data = Data(base64Encoded: String(payload.filter { !$0.isWhitespace })),
                  !payload.isEmpty else {
                throw Error(description: "data: URL has invalid base64")
            }
            return [UInt8](data)
        }
        guard let decoded = String(payload).removingPercentEncoding else {
            throw Error(description: "data: URL has invalid percent-encoding")
        }
        return Array(decoded.utf8)
    }
}
