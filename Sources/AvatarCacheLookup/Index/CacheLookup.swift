import AvatarCacheModel
import AvatarCacheMonograms
import AvatarCacheSupport
import Foundation
import GRDB

/// "What do I draw for this user?" — the lookup a notification banner makes for a message's sender.
/// A query on the index (a few rows, whatever the cache's size), the tier for the view
/// size, and the access recorded in the index so the prune keeps what is looked up.
///
/// Keep one open for many lookups (a notification service): each is then a few
/// hundred microseconds. It reads while a warm-up writes.
public final class CacheLookup: Sendable {
    public let directory: CacheDirectory
    let index: CacheIndex

    /// Opens the cache's index. A cache written before the index is imported first,
    /// under the cache lock (waiting up to `lockWait` seconds for a running warm-up).
    public init(directory: CacheDirectory, lockWait: TimeInterval = 30) throws {
        self.directory = directory
        index = try CacheIndex.openExisting(directory, lockWait: lockWait)
    }

    /// Waits until the accesses recorded so far are in the index.
    public func flush() {
        _ = try? index.write { _ in }
    }

    /// Waits for the accesses still being written, then closes the index.
    deinit { index.close() }

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
        /// What to draw while the file loads: a photo's ThumbHash and average colour
        /// (nil for a photo decoded by an earlier version), or the monogram's colour.
        public var placeholder: Placeholder?
    }

    public struct NotFound: Error, CustomStringConvertible {
        public var what: String
        public var description: String { "\(what) is not in the cache" }
    }

    /// The apps' decode rule: a view of `points` needs a decode of max(points × 2, 110) points;
    /// the smallest tier at least that large, else the largest there is.
    public static func tier(forViewPoints points: Double, scale: Int, available: [Int]) -> Int? {
        let needed = Int((max(points * 2, 110) * Double(scale)).rounded(.up))
        let sorted = available.sorted()
        return sorted.first { $0 >= needed } ?? sorted.last
    }

    public func lookup(userID: String? = nil, url: String? = nil, viewPoints: Double, scale: Int, recordAccess: Bool = true) throws -> Answer {
        let (answer, key) = try index.read { db -> (Answer, String?) in
            var answer: Answer
            let shown: (key: String?, entry: CacheEntry?)
            if let userID {
                guard let profile = try ProfileRecords.profile(db, id: userID) else { throw NotFound(what: "user \"\(userID)\"") }
                let current = try ProfileRecords.shown(db, profile)
                answer = Answer(userId: userID, url: profile.photoSource.flatMap { $0.hasPrefix("http") ? $0 : nil },
                                displayName: profile.displayName, initials: profile.initials, glyph: profile.glyph,
                                color: profile.color, textColor: profile.textColor, kind: current.kind)
                shown = (current.key, current.entry)
            } else if let url {
                guard let entry = try EntryRecords.entry(db, key: url) else { throw NotFound(what: "URL \(shownURL(url))") }
                let owner = try ProfileRecords.owner(db, ofSource: url)
                answer = Answer(userId: owner?.id, url: url, displayName: owner?.displayName, initials: owner?.initials,
                                glyph: owner?.glyph, color: owner?.color, textColor: owner?.textColor, kind: .photo)
                shown = (url, entry)
            } else {
                throw NotFound(what: "nothing asked")
            }
            if let entry = shown.entry, entry.kind == .photo {
                answer.placeholder = entry.placeholder
            } else if let color = answer.color {
                answer.placeholder = Placeholder(color: color)
            }
            if let entry = shown.entry,
               let tier = Self.tier(forViewPoints: viewPoints, scale: scale, available: entry.files.keys.compactMap { Int($0) }),
               let file = entry.files[String(tier)] {
                answer.tier = tier
                answer.side = file.width
                answer.file = directory.root.appendingPathComponent(file.filename).path
            }
            return (answer, shown.key)
        }
        if recordAccess, let key {
            // An access for the prune, written in the background (in order with other
            // writes; closing the lookup waits for it): the answer does not wait for a
            // commit, nor for a warm-up's transaction. A lookup still answers when it
            // cannot be recorded.
            let now = Date()
            index.writeLater({ try EntryRecords.touch($0, key: key, at: now) }, completion: { _ in })
        }
        return answer
    }
}
