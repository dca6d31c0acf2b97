import Foundation

/// "What do I draw for this user?" — the notification-banner lookup of the PRD's FR-3.
/// Reads `metadata.json` (never half-written: it is replaced by rename), picks the
/// tier for the view size, and records the access in the journal.
public struct CacheLookup: Sendable {
    public let directory: CacheDirectory

    public init(directory: CacheDirectory) {
        self.directory = directory
    }

    public struct Answer: Codable, Sendable, Equatable {
        public var userId: String?
        public var url: String?
        public var displayName: String?
        /// Two letters, or empty when a glyph is drawn.
        public var initials: String?
        public var glyph: MonogramGlyph?
        public var color: String?
        public var textColor: String?
        /// photo, monogram, or none (nothing cached: draw the initials yourself).
        public var kind: AvatarKind
        /// Absolute path of the file to draw.
        public var file: String?
        /// The tier chosen, in pixels, and the file's actual side.
        public var tier: Int?
        public var side: Int?
    }

    public struct NotFound: Error, CustomStringConvertible {
        public var what: String
        public var description: String { "\(what) is not in the cache" }
    }

    /// The seed's rule: a view of `points` needs a decode of max(points × 2, 110) points;
    /// the smallest tier at least that large, else the largest there is.
    public static func tier(forViewPoints points: Double, scale: Int, available: [Int]) -> Int? {
        let needed = Int((max(points * 2, 110) * Double(scale)).rounded(.up))
        let sorted = available.sorted()
        return sorted.first { $0 >= needed } ?? sorted.last
    }

    public func lookup(userID: String? = nil, url: String? = nil, viewPoints: Double, scale: Int) throws -> Answer {
        let metadata = try directory.loadMetadata()
        var answer: Answer
        var files: [String: CacheFile] = [:]
        var entryKey: String?
        if let userID {
            guard let profile = metadata.profiles[userID] else { throw NotFound(what: "user \"\(userID)\"") }
            answer = Answer(userId: userID, url: profile.photoSource.flatMap { $0.hasPrefix("http") ? $0 : nil },
                            displayName: profile.displayName, initials: profile.cachedInitials, glyph: profile.glyph,
                            color: profile.avatarColorHex, textColor: profile.textColorHex, kind: profile.kind)
            switch profile.kind {
            case .photo: entryKey = profile.photoSource
            case .monogram: entryKey = profile.monogramSource
            case .none: entryKey = nil
            }
        } else if let url {
            guard metadata.entries[url] != nil else { throw NotFound(what: "URL \(redactedURL(url))") }
            let owner = metadata.profiles.first { $0.value.photoSource == url }
            answer = Answer(userId: owner?.key, url: url, displayName: owner?.value.displayName, initials: owner?.value.cachedInitials,
                            glyph: owner?.value.glyph, color: owner?.value.avatarColorHex, textColor: owner?.value.textColorHex, kind: .photo)
            entryKey = url
        } else {
            throw NotFound(what: "nothing asked")
        }
        if let key = entryKey, let entry = metadata.entries[key] {
            files = entry.files
            if let tier = Self.tier(forViewPoints: viewPoints, scale: scale, available: files.keys.compactMap { Int($0) }),
               let file = files[String(tier)] {
                answer.tier = tier
                answer.side = file.width
                answer.file = directory.root.appendingPathComponent(file.filename).path
            }
            try? AccessJournal(directory: directory).record(key)
        } else {
            answer.kind = .none
        }
        return answer
    }
}
