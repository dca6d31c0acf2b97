import AvatarCacheModel
import AvatarCacheMonograms
import AvatarCacheSupport
import Foundation

/// Reads a Monica contacts export, in the forms people save it: API v1 pages
/// `{"data": [...]}` (one file a page, or a folder of them), several pages in one JSON
/// array (what `jq -s` makes of saved pages), contacts as NDJSON or in an array, and a
/// single contact's body (`{"data": {...}}`). Each contact has `id`, `first_name`,
/// `last_name` and `information.avatar {url, source, default_avatar_color}`.
///
/// - `default`: no download, a monogram in `default_avatar_color`;
/// - `gravatar`, `external`: downloaded without the token;
/// - `photo`: downloaded with the Monica token (sent to the Monica host only);
/// - `adorable`: a `data:` URL, decoded inline;
/// - anything else (unknown source, null avatar, no `information`): reported, monogram.
///
/// An element whose `"object"` is not `"contact"` (a page of photos, of notes) is
/// reported and skipped, never taken for a nameless contact.
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

    /// One element: a contact, something else Monica returns, or why it is unreadable.
    struct Element: Decodable {
        var contact: Contact?
        /// Its `"object"` when that is not `"contact"`.
        var otherKind: String?
        var problem: String?

        init(from decoder: Decoder) throws {
            let container = try decoder.container(keyedBy: AnyKey.self)
            if let kind = try? container.decode(String.self, forKey: AnyKey("object")), kind != "contact" {
                otherKind = kind
                return
            }
            do {
                contact = try Contact(from: decoder)
            } catch let error as DecodingError {
                problem = error.readable
            }
        }
    }

    /// One record of the file: a contact, a page of contacts (`{"data": [...]}` inside
    /// an array of pages), or a single contact's body (`{"data": {...}}`).
    struct Record: Decodable {
        var elements: [Element]
        var isPage = false

        init(from decoder: Decoder) throws {
            let container = try decoder.container(keyedBy: AnyKey.self)
            let data = AnyKey("data")
            if container.contains(data) {
                if let page = try? container.decode([Element].self, forKey: data) {
                    elements = page
                    isPage = true
                } else {
                    elements = [try container.decode(Element.self, forKey: data)]
                }
            } else {
                elements = [try Element(from: decoder)]
            }
        }
    }

    struct AnyKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(_ string: String) { stringValue = string }
        init?(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    public func read(_ body: (ExportItem) throws -> Void) throws {
        // A folder of saved pages is read in name order.
        var contacts = 0
        var pages = PageMeta()
        for file in try ExportFormat.filesToRead(path, endingWith: ExportFormat.pageExtensions, kind: ".json") {
            contacts += try readFile(file, body)
            pages.add(file)
        }
        // The API's pages state how many contacts there are (`meta.total`, the same on every
        // page) and which page each is: counted with the run's other pages of the same list.
        guard let total = pages.total else { return }
        var count = InputCount(source: path, statedBy: "meta.total of \(pages.list ?? "the pages")", unit: "contacts", stated: total, read: contacts)
        count.shared = true
        count.pages = pages.seen.sorted()
        count.lastPage = pages.lastPage
        try body(.count(count))
    }

    /// What Monica's API pages say of themselves: `meta.total`, `meta.current_page`,
    /// `meta.last_page` (a page saved whole, or pages in one array as `jq -s` makes them).
    struct PageMeta {
        var total: Int?
        var lastPage: Int?
        var seen = Set<Int>()
        /// The list the pages are of (`meta.path`: the API's URL).
        var list: String?
        /// Files larger than this are not looked at for their `meta`.
        static let maxLookBytes = 64 << 20

        mutating func add(_ file: String) {
            guard let size = ExportFormat.regularFileSize(file), size <= Self.maxLookBytes,
                  let data = FileManager.default.contents(atPath: file),
                  let root = try? JSONSerialization.jsonObject(with: data) else { return }
            let pages = (root as? [Any])?.compactMap { $0 as? [String: Any] } ?? [(root as? [String: Any]) ?? [:]]
            for page in pages {
                guard let meta = page["meta"] as? [String: Any], page["data"] is [Any] else { continue }
                // Bounded: a hostile number cannot overflow a sum.
                if let value = meta["total"] as? Int, value >= 0 { total = max(total ?? 0, min(value, 1 << 40)) }
                if let value = meta["last_page"] as? Int, value >= 0 { lastPage = max(lastPage ?? 0, min(value, 1 << 40)) }
                if let value = meta["current_page"] as? Int { seen.insert(value) }
                if let value = meta["path"] as? String, !value.isEmpty {
                    // The list's URL, shown without its query or credentials.
                    list = redactedURL(String(value.prefix { $0 != "?" && $0 != "#" }))
                }
            }
        }
    }

    /// Reads one file; returns the contacts it holds (read, or reported as unreadable).
    private func readFile(_ file: String, _ body: (ExportItem) throws -> Void) throws -> Int {
        var contacts = 0
        try JSONRecordDecoding<Record>(path: file, recordsKey: "data", limits: limits).forEach { result, bad in
            let record: Record
            switch result {
            case .failure(let failure):
                try body(.bad(failure))
                return
            case .success(let value):
                record = value
            }
            for (offset, element) in record.elements.enumerated() {
                let place = record.isPage ? "contact \(offset + 1) of the page: " : ""
                if let kind = element.otherKind {
                    try body(.bad(bad("\(place)a \"\(kind.prefix(40))\" object, not a contact: skipped")))
                } else if let problem = element.problem {
                    try body(.bad(bad(place + problem)))
                } else if let contact = element.contact {
                    contacts += 1
                    try emit(contact, origin: bad.origin, body) { bad(place + $0) }
                }
            }
        }
        return contacts
    }

    private func emit(_ contact: Contact, origin: RecordOrigin, _ body: (ExportItem) throws -> Void, bad: (String) -> BadRecord) throws {
        guard !contact.id.value.isEmpty else {
            try body(.bad(bad("\"id\" is empty")))
            return
        }
        let name = [contact.first_name, contact.last_name]
            .compactMap { $0?.trimmedWhitespace }
            .filter { !$0.isEmpty }.joined(separator: " ")
        var profile = Profile(
            id: contact.id.value,
            displayName: name.isEmpty ? (contact.complete_name ?? "") : name,
            initials: Initials.from(firstName: contact.first_name, lastName: contact.last_name),
            colorHex: contact.information?.avatar?.default_avatar_color
        )
        profile.origin = origin
        if let color = contact.information?.avatar?.default_avatar_color, profile.colorHex == nil {
            try body(.bad(bad("default_avatar_color \"\(color.prefix(40))\" is not #RRGGBB; a palette colour is used")))
        }
        guard let avatar = contact.information?.avatar else {
            try body(.bad(bad(contact.information == nil ? "no \"information\": monogram used" : "no avatar: monogram used")))
            try body(.profile(profile))
            return
        }
        let url = avatar.url?.trimmedWhitespace ?? ""
        switch avatar.source?.lowercased() {
        case "default":
            break
        case "gravatar", "photo", "external":
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

/// `data:[<media type>][;base64],<data>` URLs, bounded in size.
public enum DataURL {
    public struct Error: Swift.Error, CustomStringConvertible {
        public var description: String
    }

    public static func decode(_ text: String, maxBytes: Int) throws -> [UInt8] {
        try decode(text.utf8, maxBytes: maxBytes)
    }

    /// A `data:` URL's bytes, from the URL's own bytes (a 20 MB photo's URL is not copied
    /// or read as `Character`s): base64 with blanks skipped, else percent-encoded.
    static func decode<Text: Collection<UInt8>>(_ text: Text, maxBytes: Int) throws -> [UInt8] {
        guard VCardParser.hasPrefix(text, "DATA:") else { throw Error(description: "not a data: URL") }
        guard let comma = text.firstIndex(of: UInt8(ascii: ",")) else { throw Error(description: "data: URL without a comma") }
        let header = String(decoding: text[text.index(text.startIndex, offsetBy: 5)..<comma], as: UTF8.self).lowercased()
        let payload = text[text.index(after: comma)...]
        let tooLarge = Error(description: "data: URL larger than \(maxBytes) bytes")
        if header.hasSuffix(";base64") {
            switch Base64.decode(payload, maxBytes: maxBytes) {
            case .bytes(let bytes) where !bytes.isEmpty: return bytes
            case .tooLarge: throw tooLarge
            default: throw Error(description: "data: URL has invalid base64")
            }
        }
        guard payload.count / 3 <= maxBytes else { throw tooLarge }
        guard let decoded = String(decoding: payload, as: UTF8.self).removingPercentEncoding else {
            throw Error(description: "data: URL has invalid percent-encoding")
        }
        guard decoded.utf8.count <= maxBytes else { throw tooLarge }
        return Array(decoded.utf8)
    }
}

extension ExportFormat {
    public static let monica = MonicaReader.format
}

extension MonicaReader: ExportFormatReader {
    public static let name = "monica"
    public static let summary = "Monica contacts: API pages, as files or a folder"
    public static let evidence = "a folder of .json pages, \"first_name\", or \"data\" with \"information\""
    public static let folderFiles: FolderFiles? = FolderFiles(extensions: ExportFormat.pageExtensions, name: "Monica pages")

    public static func recognises(_ sample: ExportSample) throws -> Bool {
        if sample.isFolder { return try sample.isFolder(of: self) }
        return try sample.hasKey("first_name") || (sample.hasKey("data") && sample.hasKey("information"))
    }

    public static func reader(path: String, limits: ReaderLimits, map: FieldMap) -> any ExportReader {
        MonicaReader(path: path, limits: limits)
    }
}
