import AvatarCacheModel
import AvatarCacheSupport
import Foundation

/// Which fields of a document make a person, each role resolved to its paths (from the
/// field map, or chosen from the documents by `FieldChooser`).
struct PeoplePlan: Sendable {
    /// nil: the document's id (a JSON record's `id`).
    var id: [FieldPath]?
    var name: [FieldPath] = []
    var givenName: [FieldPath] = []
    var familyName: [FieldPath] = []
    var photo: [FieldPath] = []
    var color: [FieldPath] = []
    /// Photos in Firebase Storage: an emulator export's blobs, a bucket for storage paths.
    var storage: FirebaseStorage?

    /// The top-level names these paths start from, as UTF-8 (what a Firestore decode needs).
    var wantedHeads: [[UInt8]] {
        let paths = (id ?? []) + name + givenName + familyName + photo + color
        return Array(Set(paths.map(\.head))).sorted().map { Array($0.utf8) }
    }

    /// How many people had a value for each role, for the log and the report.
    struct Tally {
        var documents = 0
        var counts: [String: Int] = [:]
        mutating func count(_ role: String) { counts[role, default: 0] += 1 }
    }

    /// The first of `paths` present and not empty in `fields`, with the path.
    static func first(_ paths: [FieldPath], in fields: DocumentFields) -> (FieldPath, DocumentValue)? {
        for path in paths {
            if let value = path.value(in: fields), !value.isEmpty { return (path, value) }
        }
        return nil
    }

    /// The text of an id, a name or a colour: text, or a whole number.
    static func text(_ value: DocumentValue) -> String? {
        switch value {
        case .string(let text): return text.trimmedWhitespace
        case .integer(let number): return String(number)
        case .reference(let path): return path.split(separator: "/").last.map(String.init)
        default: return nil
        }
    }

    /// Makes a profile of `fields`; `problems` gets what was read as absent and why.
    /// nil when there is no usable id.
    func profile(documentID: String, fields: DocumentFields, limits: ReaderLimits,
                 tally: inout Tally, problems: inout [String]) -> Profile? {
        tally.documents += 1
        var userID = documentID
        if let id {
            guard let (path, value) = Self.first(id, in: fields) else {
                problems.append("no \(id.map(\.text).joined(separator: "|")): not a person, skipped")
                return nil
            }
            guard let text = Self.text(value), !text.isEmpty else {
                problems.append("field \"\(path)\": expected text or a whole number for the id, found \(value.kind): skipped")
                return nil
            }
            userID = text
        }
        guard !userID.isEmpty else {
            problems.append("an empty id: skipped")
            return nil
        }
        var displayName = ""
        if let (path, value) = Self.first(name, in: fields) {
            if let text = Self.text(value) {
                displayName = text
                tally.count("name=\(path)")
            } else {
                problems.append("field \"\(path)\": expected text, found \(value.kind): read as absent")
            }
        }
        if displayName.isEmpty {
            let given = Self.first(givenName, in: fields).flatMap { Self.text($0.1) } ?? ""
            let family = Self.first(familyName, in: fields).flatMap { Self.text($0.1) } ?? ""
            displayName = [given, family].filter { !$0.isEmpty }.joined(separator: " ")
            if !displayName.isEmpty { tally.count("given-name + family-name") }
        }
        var photo: PhotoSource?
        if let (path, value) = Self.first(self.photo, in: fields) {
            switch PhotoValue.source(value, limits: limits, storage: storage) {
            case .success(let source):
                photo = source
                if source != nil { tally.count("photo=\(path)") }
            case .failure(let problem):
                problems.append("field \"\(path)\": \(problem.description): monogram used")
            }
        }
        var colorHex: String?
        if let (path, value) = Self.first(color, in: fields) {
            colorHex = Self.text(value)
            if colorHex != nil { tally.count("color=\(path)") }
        }
        return Profile(id: userID, displayName: displayName, photo: photo, colorHex: colorHex)
    }
}

/// A photo value as apps store it: an http(s) URL (fetched under the network rules), a
/// `data:` URI (decoded inline, bounded), text in an array's first element or in a map's
/// `url`/`downloadUrl`. `gs://` paths, relative paths, `blob:` URLs and other schemes are
/// not fetchable: reported, never guessed into a URL.
enum PhotoValue {
    struct Problem: Error, CustomStringConvertible {
        var description: String
    }

    /// Keys of a map that hold its URL (Firebase Storage's `downloadUrl`, …).
    static let urlKeys = ["downloadUrl", "downloadURL", "url", "uri", "src", "href", "secure_url"]

    static func source(_ value: DocumentValue, limits: ReaderLimits, storage: FirebaseStorage? = nil) -> Result<PhotoSource?, Problem> {
        switch value {
        case .null: return .success(nil)
        case .string(let text): return source(text, limits: limits, storage: storage)
        case .array(let elements):
            guard let first = elements.first else { return .success(nil) }
            return source(first, limits: limits, storage: storage)
        case .map(let fields):
            for key in urlKeys {
                if let inner = fields[key], case .string = inner { return source(inner, limits: limits, storage: storage) }
            }
            // Firebase Storage's own reference: { bucket, fullPath } or { path }.
            for key in ["fullPath", "path", "storagePath", "ref"] {
                if let inner = fields[key], case .string(let path) = inner {
                    let bucket = fields["bucket"].flatMap { if case .string(let b) = $0 { return b } else { return nil } }
                    return source(bucket.map { "gs://\($0)/\(path)" } ?? path, limits: limits, storage: storage)
                }
            }
            return .failure(Problem(description: "a map without a url (keys: \(fields.names.prefix(8).joined(separator: ", ")))"))
        case .bytes(let bytes):
            return bytes.count <= limits.maxInlineBytes ? .success(.inline(InlinePhoto(bytes: bytes))) : .failure(Problem(description: "inline bytes larger than \(limits.maxInlineBytes) bytes"))
        default:
            return .failure(Problem(description: "expected a URL, found \(value.kind)"))
        }
    }

    static func source(_ raw: String, limits: ReaderLimits, storage: FirebaseStorage? = nil) -> Result<PhotoSource?, Problem> {
        let text = raw.trimmedWhitespace
        if text.isEmpty { return .success(nil) }
        if let storage, let resolved = storage.resolve(text, limits: limits) {
            return resolved.map { $0 }
        }
        let lower = text.prefix(8).lowercased()
        if lower.hasPrefix("http://") || lower.hasPrefix("https://") {
            return .success(.url(text, sendMonicaToken: false))
        }
        if lower.hasPrefix("data:") {
            do {
                return .success(.inline(InlinePhoto(bytes: try DataURL.decode(text, maxBytes: limits.maxInlineBytes))))
            } catch let error as DataURL.Error {
                return .failure(Problem(description: error.description))
            } catch {
                return .failure(Problem(description: "\(error)"))
            }
        }
        let shown = abbreviated(text, limit: 80)
        if lower.hasPrefix("gs://") {
            return .failure(Problem(description: "\"\(shown)\" is a Cloud Storage path, not a URL that can be fetched (--storage-bucket downloads a bucket's photos)"))
        }
        if lower.hasPrefix("blob:") {
            return .failure(Problem(description: "\"\(shown)\" is a browser's blob: URL, which exists only in the page that made it"))
        }
        if let colon = text.firstIndex(of: ":"), text[..<colon].allSatisfy({ $0.isLetter || $0.isNumber || "+.-".contains($0) }), !text[..<colon].isEmpty {
            return .failure(Problem(description: "\"\(shown)\": the \(text[..<colon].lowercased()): scheme is not fetched (http and https only)"))
        }
        return .failure(Problem(description: "\"\(shown)\" is a relative path, not a URL (its host is not in the export; a Firebase Storage path is downloaded with --storage-bucket)"))
    }
}
