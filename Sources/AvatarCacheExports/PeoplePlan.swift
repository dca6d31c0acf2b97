import AvatarCacheModel
import AvatarCacheMonograms
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
    /// The e-mail, read only to know a document's Firebase Auth account by.
    var email: [FieldPath] = []
    /// The operator mapped the given and family names and not `name`: they name the
    /// person, a name field the chooser found only where they are absent.
    var givenAndFamilyFirst = false
    /// A bare name (`name`, `nombre`) the chooser found is joined with the family name
    /// beside it; a name the operator mapped is read as it is.
    var joinsBareName = true
    /// Photos in Firebase Storage: an emulator export's blobs, a bucket for storage paths.
    var storage: FirebaseStorage?
    /// What decided each role the chooser filled, and the candidates it passed over and
    /// why (for the note and `inspect`).
    var evidence: [FieldMap.Key: String] = [:]
    var passed: [FieldMap.Key: [String]] = [:]

    /// Whether a path names the document's id (`__name__`).
    var usesDocumentName: Bool {
        (id?.contains(where: \.isDocumentName) ?? false) || [name, givenName, familyName, photo, color].contains { $0.contains(where: \.isDocumentName) }
    }

    /// The top-level names these paths start from, as UTF-8 (what a Firestore decode needs).
    var wantedHeads: [[UInt8]] {
        let paths = (id ?? []) + name + givenName + familyName + photo + color + email
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

    /// The first of the name fields the chooser found whose value is not an e-mail
    /// address (a `displayName` some users' sign-up filled with theirs), else the first.
    static func firstName(_ paths: [FieldPath], in fields: DocumentFields) -> (FieldPath, DocumentValue)? {
        var fallback: (FieldPath, DocumentValue)?
        for path in paths {
            guard let value = path.value(in: fields), !value.isEmpty else { continue }
            if case .string(let text) = value, ValueEvidence.isEmail(text.trimmedWhitespace) {
                if fallback == nil { fallback = (path, value) }
                continue
            }
            return (path, value)
        }
        return fallback
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

    /// A given and a family name in the order their language writes them: 山田太郎 (CJK:
    /// family first, no space), else "Given Family".
    static func joined(given: String, family: String) -> String {
        if !given.isEmpty, !family.isEmpty, Initials.writtenFamilyNameFirst(family + given) { return family + given }
        return [given, family].filter { !$0.isEmpty }.joined(separator: " ")
    }

    /// A name field that often holds the given name alone (`name`, `nombre`, `nome`).
    static func isBareName(_ path: FieldPath) -> Bool {
        guard case .key(let last)? = path.components.last else { return false }
        return FieldChooser.bareNameWords.contains(FieldChooser.normalized(last[...]))
    }

    /// Keys of a name held as a map (`name: {firstName, middleName, lastName}`), by role.
    static let mapFullNameKeys = ["fullName", "full", "displayName", "formatted", "text"]
    static let mapGivenKeys = ["firstName", "first", "givenName", "given", "forename"] + FieldChooser.givenNameFields
    static let mapMiddleKeys = ["middleName", "middle", "middleNames", "additionalName", "secondName"]
    static let mapFamilyKeys = ["lastName", "last", "familyName", "family", "surname"] + FieldChooser.familyNameFields

    /// The text of a name: text or a whole number, or a name held as a map: its full name,
    /// else its given, middle and family names joined.
    static func nameText(_ value: DocumentValue) -> String? {
        guard case .map(let parts) = value else { return text(value) }
        func part(_ keys: [String]) -> String {
            for key in keys {
                if let (_, found) = FieldChooser.resolve(key, in: parts), let text = text(found), !text.isEmpty { return text }
            }
            return ""
        }
        let full = part(mapFullNameKeys)
        if !full.isEmpty { return full }
        let given = [part(mapGivenKeys), part(mapMiddleKeys)].filter { !$0.isEmpty }.joined(separator: " ")
        let joined = self.joined(given: given, family: part(mapFamilyKeys))
        return joined.isEmpty ? nil : joined
    }

    /// Makes a profile of `fields`; `problems` gets what was read as absent and why.
    /// nil when there is no usable id.
    func profile(documentID: String, fields: DocumentFields, limits: ReaderLimits,
                 tally: inout Tally, problems: inout [String]) -> Profile? {
        tally.documents += 1
        var fields = fields
        if usesDocumentName { fields[FieldPath.documentName] = .string(documentID) }
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
        let given = Self.first(givenName, in: fields).flatMap { Self.text($0.1) } ?? ""
        let familyFound = Self.first(familyName, in: fields)
        let family = familyFound.flatMap { Self.text($0.1) } ?? ""
        var displayName = ""
        if givenAndFamilyFirst {
            // A given-name field that holds the whole name already is not joined again.
            let whole = !family.isEmpty && given.count > family.count && given.range(of: family, options: [.caseInsensitive, .diacriticInsensitive]) != nil
            displayName = whole ? given : Self.joined(given: given, family: family)
            if !displayName.isEmpty { tally.count("given-name + family-name") }
        }
        if displayName.isEmpty, let (path, value) = joinsBareName ? Self.firstName(name, in: fields) : Self.first(name, in: fields) {
            if let text = Self.nameText(value) {
                displayName = text
                if let familyPath = familyFound?.0, !family.isEmpty, joinsBareName, Self.isBareName(path),
                   given.isEmpty || given.caseInsensitiveCompare(text) == .orderedSame,
                   text.range(of: family, options: [.caseInsensitive, .diacriticInsensitive]) == nil {
                    // `name` + `surname`: the given name alone beside the family name.
                    displayName = Self.joined(given: text, family: family)
                    tally.count("name=\(path) + family-name=\(familyPath)")
                } else {
                    tally.count("name=\(path)")
                }
            } else {
                problems.append("field \"\(path)\": expected text, found \(value.kind): read as absent")
            }
        }
        if displayName.isEmpty && !givenAndFamilyFirst {
            displayName = Self.joined(given: given, family: family)
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
