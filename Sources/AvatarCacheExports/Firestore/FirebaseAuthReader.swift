import AvatarCacheJSON
import AvatarCacheModel
import Foundation

/// Reads a Firebase Auth export: `firebase auth:export` JSON (`{"users": [...]}`, what the
/// emulator writes as `auth_export/accounts.json`) or CSV (no header; the documented
/// column order: UID, Email, Email Verified, Password Hash, Password Salt, Name, Photo
/// URL, then Google's, Facebook's, Twitter's and GitHub's ID, Email, Display Name and
/// Photo URL, creation and sign-in times, phone number).
///
/// A person is `localId` (UID), `displayName` (Name) and `photoUrl` (Photo URL); a
/// provider's display name and photo fill what the account lacks (Google sign-in).
/// Password hashes and salts are never read into anything: the JSON decoder has no
/// field for them, and a CSV line's hash and salt columns are skipped without being kept.
public struct FirebaseAuthReader: ExportReader {
    public let path: String
    public let limits: ReaderLimits

    public init(path: String, limits: ReaderLimits = ReaderLimits()) {
        self.path = path
        self.limits = limits
    }

    /// One account: what a person needs, nothing more.
    struct Account: Decodable {
        var localId: String
        var displayName: String?
        var photoUrl: String?
        var providerUserInfo: [Provider]?
        /// The account's e-mail, to know its document by (never logged with the account).
        var email: String?

        struct Provider: Decodable {
            var displayName: String?
            var photoUrl: String?
        }

        enum CodingKeys: String, CodingKey { case localId, displayName, photoUrl, providerUserInfo, email }

        init(localId: String, displayName: String?, photoUrl: String?, providerUserInfo: [Provider]?, email: String? = nil) {
            self.localId = localId
            self.displayName = displayName
            self.photoUrl = photoUrl
            self.providerUserInfo = providerUserInfo
            self.email = email
        }

        init(from decoder: Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            localId = try container.decode(String.self, forKey: .localId)
            var problems: [(field: String, found: String)] = []
            displayName = try container.lenientString(.displayName, &problems)
            photoUrl = try container.lenientString(.photoUrl, &problems)
            providerUserInfo = try? container.decodeIfPresent([Provider].self, forKey: .providerUserInfo)
            email = try? container.decodeIfPresent(String.self, forKey: .email)
        }

        /// The account's name, else its first provider's that has one.
        var name: String {
            let own = displayName?.trimmedWhitespace ?? ""
            if !own.isEmpty { return own }
            return providerUserInfo?.lazy.compactMap { $0.displayName?.trimmedWhitespace }.first { !$0.isEmpty } ?? ""
        }

        /// The account's photo, else its first provider's that has one.
        var photo: String? {
            let own = photoUrl?.trimmedWhitespace ?? ""
            if !own.isEmpty { return own }
            return providerUserInfo?.lazy.compactMap { $0.photoUrl?.trimmedWhitespace }.first { !$0.isEmpty }
        }
    }

    /// Whether `text` starts as `firebase auth:export` CSV does: a first line of at least
    /// 23 columns (the export writes 26), outside quotes.
    static func looksLikeCSV(_ text: String) -> Bool {
        var commas = 0, quoted = false
        for character in text.utf8 {
            if character == UInt8(ascii: "\"") { quoted.toggle() }
            else if character == UInt8(ascii: ",") && !quoted { commas += 1 }
            else if (character == 10 || character == 13) && !quoted { break }
        }
        return commas >= 22 && !text.hasPrefix("{") && !text.hasPrefix("[")
    }

    /// Whether `path` is CSV rather than JSON: its first byte that is not blank is not `{` or `[`.
    static func isCSV(_ path: String) -> Bool {
        guard let handle = FileHandle(forReadingAtPath: path) else { return false }
        defer { try? handle.close() }
        let head = handle.readData(ofLength: 4096)
        guard let first = head.first(where: { !JSONReader.isWhitespace($0) && $0 != 0xEF && $0 != 0xBB && $0 != 0xBF }) else { return false }
        return first != UInt8(ascii: "{") && first != UInt8(ascii: "[")
    }

    /// Every account in file order, with the record it came from; bad ones as `BadRecord`s.
    func accounts(_ body: (Result<(Account, RecordOrigin), BadRecord>) throws -> Void) throws {
        if Self.isCSV(path) {
            try csvAccounts(body)
            return
        }
        try JSONRecordDecoding<Account>(path: path, recordsKey: "users", limits: limits).forEach { result, locate in
            switch result {
            case .failure(let bad): try body(.failure(bad))
            case .success(let account):
                guard !account.localId.trimmedWhitespace.isEmpty else {
                    try body(.failure(locate("\"localId\" is empty")))
                    return
                }
                try body(.success((account, locate.origin)))
            }
        }
    }

    private func csvAccounts(_ body: (Result<(Account, RecordOrigin), BadRecord>) throws -> Void) throws {
        var reader: CSVLineReader
        do {
            reader = try CSVLineReader(path: path, maxRecordBytes: limits.maxRecordBytes)
        } catch {
            throw ExportError(file: path, reason: "cannot open: \(error.localizedDescription)")
        }
        var index = 0
        while let row = reader.next() {
            index += 1
            let origin = RecordOrigin(file: path, index: index, line: row.line)
            if let problem = row.problem {
                try body(.failure(BadRecord(file: path, index: index, line: row.line, reason: problem)))
                continue
            }
            let fields = row.fields
            // Columns 3 and 4 (password hash and salt) are never looked at.
            func column(_ number: Int) -> String? {
                guard number < fields.count else { return nil }
                let text = fields[number].trimmedWhitespace
                return text.isEmpty ? nil : text
            }
            guard fields.count >= 7 else {
                try body(.failure(BadRecord(file: path, index: index, line: row.line, reason: "\(fields.count) columns; an auth:export CSV line has at least 7 (UID, Email, Email Verified, Password Hash, Password Salt, Name, Photo URL)")))
                continue
            }
            guard let uid = column(0) else {
                try body(.failure(BadRecord(file: path, index: index, line: row.line, reason: "the UID column is empty")))
                continue
            }
            let providers = [(9, 10), (13, 14), (17, 18), (21, 22)].map { Account.Provider(displayName: column($0.0), photoUrl: column($0.1)) }
            try body(.success((Account(localId: uid, displayName: column(5), photoUrl: column(6), providerUserInfo: providers, email: column(1)), origin)))
        }
    }

    public func read(_ body: (ExportItem) throws -> Void) throws {
        var count = 0
        try accounts { result in
            switch result {
            case .failure(let bad): try body(.bad(bad))
            case .success(let (account, origin)):
                count += 1
                let (profile, problem) = Self.profile(account, origin: origin, limits: limits)
                if let problem { try body(.bad(problem)) }
                try body(.profile(profile))
            }
        }
        try body(.note("\(path): \(count) Firebase Auth accounts: id=localId, name=displayName, photo=photoUrl"))
    }

    /// The profile of an account, and a bad record when its photo cannot be used.
    static func profile(_ account: Account, origin: RecordOrigin, limits: ReaderLimits) -> (Profile, BadRecord?) {
        var profile = Profile(id: account.localId.trimmedWhitespace, displayName: account.name)
        profile.origin = origin
        var problem: BadRecord?
        if let photo = account.photo {
            switch PhotoValue.source(photo, limits: limits) {
            case .success(let source): profile.photo = source
            case .failure(let error):
                problem = BadRecord(file: origin.file, index: origin.index, line: origin.line,
                                    reason: "account \"\(profile.id)\": photoUrl: \(error.description): monogram used")
            }
        }
        return (profile, problem)
    }
}

extension ExportFormat {
    public static let firebaseAuth = FirebaseAuthReader.format
}

extension FirebaseAuthReader: ExportFormatReader {
    public static let name = "firebase-auth"
    public static let summary = "Firebase Auth accounts: auth:export JSON or CSV"
    public static let evidence = "CSV of 23 columns or more, or \"localId\" with \"kind\" or \"users\""

    public static func recognises(_ sample: ExportSample) throws -> Bool {
        guard !sample.isFolder else { return false }
        return try looksLikeCSV(sample.head()) || (sample.hasKey("localId") && (sample.hasKey("kind") || sample.hasKey("users")))
    }

    public static func reader(path: String, limits: ReaderLimits, map: FieldMap) -> any ExportReader {
        FirebaseAuthReader(path: path, limits: limits)
    }
}
