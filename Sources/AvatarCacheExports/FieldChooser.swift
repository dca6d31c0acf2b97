import AvatarCacheLookup
/// Chooses where the people and conversations are when the field map does not say: the
/// collection from the common names, and each field from the common names by how many
/// of the first documents (`sampleSize`) have it, NexusAI's names first on a tie. Names
/// seen across 24 real Firebase exports of 20 apps (docs/inputs.md, "Firebase and other apps' names").
enum FieldChooser {
    static let sampleSize = 200

    static let userCollections = ["users", "Users", "USERS", "profiles", "publicUsers", "userProfiles", "people", "members", "accounts", "user"]
    static let conversationCollections = ["conversations", "Conversations", "chats", "Chats", "chatRooms", "chatrooms", "rooms", "threads", "channels"]

    static let idFields = ["uid", "userId", "userID", "user_id", "id"]
    static let nameFields = ["displayName", "name", "fullName", "full_name", "display_name", "username", "userName", "nickname", "nickName"]
    static let givenNameFields = ["firstName", "first_name", "givenName", "given_name", "firstname"]
    static let familyNameFields = ["lastName", "last_name", "familyName", "family_name", "surname", "lastname"]
    static let photoFields = ["profileImageUrl", "photoURL", "photoUrl", "imageURL", "imageUrl", "profileImage", "profileImageURL",
                              "profilePictureUrl", "profilePictureURL", "profilePicture", "profilePicUrl", "profilePic", "pfpUrl", "pfp",
                              "avatarUrl", "avatarURL", "avatar", "photo", "picture", "image", "profile_img", "profile_image",
                              "profile_image_url", "profile_photo", "profilePhoto", "photos", "images", "imagePaths"]
    static let colorFields = ["avatarColorHex", "avatarColor", "color", "colour"]
    static let participantFields = ["participantIds", "participants", "userIds", "memberIds", "members", "users"]
    static let updatedAtFields = ["updatedAt", "lastMessageAt", "lastMessageTime", "lastActivity", "lastUpdated", "lastMessage.timestamp", "lastMessage.createdAt", "timestamp", "createdAt"]
    static let lastSenderFields = ["lastMessage.senderId", "lastMessage.sender", "lastMessage.senderUid", "lastSenderId", "lastMessageSenderId", "lastMessage.userId"]

    /// The first name of `candidates` that is a collection seen (exactly, then in any case).
    static func collection(_ candidates: [String], in seen: [String: Int]) -> String? {
        if let exact = candidates.first(where: { seen[$0] != nil }) { return exact }
        let lowered = Set(candidates.map { $0.lowercased() })
        return seen.keys.sorted().first { lowered.contains($0.lowercased()) }
    }

    /// The path among `candidates` present and not empty in the most samples (at least
    /// one); map values are looked into for a URL when `urls`.
    static func field(_ candidates: [String], in samples: [DocumentFields], urls: Bool = false) -> FieldPath? {
        var best: (path: FieldPath, count: Int)?
        for candidate in candidates {
            guard let path = try? FieldPath(parsing: candidate) else { continue }
            var count = 0
            var nested: String?
            for fields in samples {
                guard let value = path.value(in: fields), !value.isEmpty else { continue }
                count += 1
                if urls, nested == nil, case .map(let map) = value {
                    nested = PhotoValue.urlKeys.first { map[$0] != nil }
                }
            }
            if count > (best?.count ?? 0) {
                let chosen = nested.flatMap { try? FieldPath(parsing: "\(candidate).\($0)") } ?? path
                best = (chosen, count)
            }
        }
        return best?.path
    }

    /// Fills the roles the map leaves open from `samples`.
    static func plan(_ map: FieldMap, samples: [DocumentFields], documentIDs: [String], idFromRecord: Bool) -> PeoplePlan {
        func given(_ key: FieldMap.Key) -> [FieldPath]? { map[key]?.compactMap(\.first) }
        var plan = PeoplePlan()
        if let id = given(.id) {
            plan.id = id
        } else if idFromRecord {
            plan.id = [try! FieldPath(parsing: "id")]
        } else if let field = field(Array(idFields.dropLast()), in: samples) {
            // A user id kept in the document (its id being a random one): the id other
            // documents and Firebase Auth know the person by, when most documents have it.
            let have = samples.filter { field.value(in: $0).flatMap(PeoplePlan.text).map { !$0.isEmpty } ?? false }.count
            let differs = zip(samples, documentIDs).contains { fields, id in field.value(in: fields).flatMap(PeoplePlan.text) != id }
            if have * 10 >= samples.count * 9 && differs { plan.id = [field] }
        }
        plan.name = given(.name) ?? field(nameFields, in: samples).map { [$0] } ?? []
        plan.givenName = given(.givenName) ?? field(givenNameFields, in: samples).map { [$0] } ?? []
        plan.familyName = given(.familyName) ?? field(familyNameFields, in: samples).map { [$0] } ?? []
        plan.photo = given(.photo) ?? field(photoFields, in: samples, urls: true).map { [$0] } ?? []
        plan.color = given(.color) ?? field(colorFields, in: samples).map { [$0] } ?? []
        return plan
    }

    /// What a person reading the log needs to know of a plan: `id = uid, name = displayName, …`.
    static func describe(_ plan: PeoplePlan) -> String {
        func paths(_ paths: [FieldPath]) -> String { paths.isEmpty ? "none" : paths.map(\.text).joined(separator: "|") }
        var parts = ["id=\(plan.id.map(paths) ?? "the document id")", "name=\(paths(plan.name))"]
        if !plan.givenName.isEmpty || !plan.familyName.isEmpty {
            parts.append("given-name=\(paths(plan.givenName))")
            parts.append("family-name=\(paths(plan.familyName))")
        }
        parts.append("photo=\(paths(plan.photo))")
        parts.append("color=\(paths(plan.color))")
        return parts.joined(separator: ", ")
    }

    /// Whether a sample looks like a person: it has a name or a photo field of the common names.
    static func looksLikePeople(_ samples: [DocumentFields]) -> Bool {
        field(nameFields + givenNameFields, in: samples) != nil || field(photoFields, in: samples) != nil
    }
}
