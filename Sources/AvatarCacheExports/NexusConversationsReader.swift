import AvatarCacheModel
import Foundation

/// Reads a NexusAI conversations export: conversations (array, `{"conversations": [...]}`
/// or NDJSON) with `participantIds`, `participants {userId: {displayName,
/// profileImageUrl}}`, `updatedAt` and `lastMessage {senderId, …}`.
///
/// Yields each participant once, those of the most recently active conversations first
/// (the people a user is talking to now matter most): the pipeline processes them first and records them as the most
/// recently accessed, so they are kept when the budget cannot hold everyone. A message
/// sender that is not a participant with a name cannot be resolved to a picture (its
/// notification would show none): the conversation is reported.
///
/// Conversations must all be read before the first participant is known to be among
/// the most recent, so this reader keeps one small record per participant in memory.
public struct NexusConversationsReader: ExportReader {
    public let path: String
    public let limits: ReaderLimits

    public init(path: String, limits: ReaderLimits = ReaderLimits()) {
        self.path = path
        self.limits = limits
    }

    struct Conversation: Decodable {
        var id: FlexibleID?
        var participantIds: [String]
        var participants: [String: Participant]?
        var updatedAt: FlexibleDate?
        var createdAt: FlexibleDate?
        var lastMessage: LastMessage?

        /// Text fields holding something else are read as absent (and reported).
        struct Participant: Decodable {
            var displayName: String?
            var profileImageUrl: String?
            var problems: [(field: String, found: String)] = []

            enum CodingKeys: String, CodingKey { case displayName, profileImageUrl }

            init(from decoder: Decoder) throws {
                let container = try decoder.container(keyedBy: CodingKeys.self)
                displayName = try container.lenientString(.displayName, &problems)
                profileImageUrl = try container.lenientString(.profileImageUrl, &problems)
            }
        }

        struct LastMessage: Decodable {
            var senderId: String?
            var timestamp: FlexibleDate?
        }
    }

    private struct Candidate {
        var profile: Profile
        var activity: Date
        var order: Int
    }

    public func read(_ body: (ExportItem) throws -> Void) throws {
        var candidates: [String: Candidate] = [:]
        var order = 0
        try JSONRecordDecoding<Conversation>(path: path, recordsKey: "conversations", limits: limits).forEach { result, bad in
            let conversation: Conversation
            switch result {
            case .failure(let record):
                try body(.bad(record))
                return
            case .success(let value):
                conversation = value
            }
            let name = conversation.id.map { "conversation \"\($0.value)\"" } ?? "conversation"
            let activity = conversation.updatedAt?.value ?? conversation.lastMessage?.timestamp?.value
                ?? conversation.createdAt?.value ?? .distantPast
            let participants = conversation.participants ?? [:]
            if let sender = conversation.lastMessage?.senderId {
                if !conversation.participantIds.contains(sender) {
                    try body(.bad(bad("\(name): lastMessage.senderId \"\(sender)\" is not in participantIds; its notification cannot show the sender's picture")))
                } else if participants[sender] == nil {
                    try body(.bad(bad("\(name): lastMessage.senderId \"\(sender)\" has no entry in participants; its notification cannot show the sender's picture")))
                }
            }
            for (userID, participant) in participants.sorted(by: { $0.key < $1.key }) {
                for problem in participant.problems {
                    try body(.bad(bad("\(name): participant \"\(userID)\": field \"\(problem.field)\": expected a string, found \(problem.found): read as absent",
                                      field: "participants.\(userID).\(problem.field)")))
                }
            }
            for id in conversation.participantIds {
                let userID = id.trimmedWhitespace
                guard !userID.isEmpty else {
                    try body(.bad(bad("\(name): an empty participant id")))
                    continue
                }
                let info = participants[userID]
                let url = info?.profileImageUrl?.trimmedWhitespace ?? ""
                var profile = Profile(
                    id: userID,
                    displayName: info?.displayName ?? "",
                    photo: url.isEmpty ? nil : .url(url, sendMonicaToken: false)
                )
                // The conversation that decides the name and photo is the record reported.
                profile.origin = bad.origin
                // The most recent conversation decides the name and the photo.
                if let existing = candidates[userID] {
                    if activity > existing.activity || (existing.profile.displayName.isEmpty && info != nil) {
                        candidates[userID] = Candidate(profile: info == nil ? existing.profile : profile, activity: max(activity, existing.activity), order: existing.order)
                    }
                } else {
                    candidates[userID] = Candidate(profile: profile, activity: activity, order: order)
                    order += 1
                }
            }
        }
        let mostRecentFirst = candidates.values.sorted {
            $0.activity != $1.activity ? $0.activity > $1.activity : $0.order < $1.order
        }
        for candidate in mostRecentFirst {
            try body(.profile(candidate.profile))
        }
    }
}

extension ExportFormat {
    public static let nexusConversations = NexusConversationsReader.format
}

extension NexusConversationsReader: ExportFormatReader {
    public static let name = "nexus-conversations"
    public static let summary = "NexusAI conversations: the latest people first"
    public static let evidence = "\"participantIds\" or \"conversations\""

    public static func recognises(_ sample: ExportSample) throws -> Bool {
        guard !sample.isFolder else { return false }
        return try sample.hasKey("participantIds") || sample.hasKey("conversations")
    }

    public static func reader(path: String, limits: ReaderLimits, map: FieldMap) -> any ExportReader {
        NexusConversationsReader(path: path, limits: limits)
    }
}
