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
    static let photoFields = ["profileImageUrl", "profilePhotoUrl", "photoPath", "avatarPath", "imagePath", "avatar_path", "photoURL", "photoUrl", "imageURL", "imageUrl", "profileImage", "profileImageURL",
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

    /// A field name as a person matches it: case-blind, across snake_case, kebab-case and
    /// camelCase (`photo_url`, `PhotoURL` and `photoUrl` are one name).
    static func normalized(_ name: Substring) -> String {
        String(name.lowercased().filter { $0 != "_" && $0 != "-" && $0 != " " })
    }

    /// The concrete path of `candidate` (`lastMessage.senderId`) in `fields`, its names
    /// matched as `normalized` (an exact name first), and its value.
    static func resolve(_ candidate: String, in fields: DocumentFields) -> (path: String, value: DocumentValue)? {
        var current = fields
        var path: [String] = []
        let components = candidate.split(separator: ".")
        for (index, component) in components.enumerated() {
            let wanted = normalized(component)
            guard let name = current[String(component)] != nil ? String(component) : current.names.first(where: { normalized($0[...]) == wanted }),
                  !name.contains("."), !name.contains("["), let value = current[name] else { return nil }
            path.append(name)
            if index == components.count - 1 { return (path.joined(separator: "."), value) }
            guard case .map(let inner) = value else { return nil }
            current = inner
        }
        return nil
    }

    /// Each concrete path of `candidates` present and not empty in `samples`, with how
    /// many samples have it, most first (the earlier candidate on a tie).
    static func found(_ candidates: [String], in samples: [DocumentFields]) -> [(path: String, count: Int, values: [DocumentValue])] {
        var order: [String] = []
        var found: [String: (count: Int, values: [DocumentValue])] = [:]
        for candidate in candidates {
            for fields in samples {
                guard let (path, value) = resolve(candidate, in: fields), !value.isEmpty else { continue }
                if found[path] == nil { order.append(path) }
                found[path, default: (0, [])].count += 1
                found[path]!.values.append(value)
            }
        }
        // Names found through two candidates (photoURL, photoUrl) counted once per document.
        return order.enumerated().map { (index, path) in (path, min(found[path]!.count, samples.count), found[path]!.values, index) }
            .sorted { $0.1 != $1.1 ? $0.1 > $1.1 : $0.3 < $1.3 }
            .map { ($0.0, $0.1, $0.2) }
    }

    /// The path among `candidates` present and not empty in the most samples (at least
    /// one); map values are looked into for a URL when `urls`.
    static func field(_ candidates: [String], in samples: [DocumentFields], urls: Bool = false) -> FieldPath? {
        fields(candidates, in: samples, urls: urls).first
    }

    /// Every path among `candidates` present in the samples, most present first: the
    /// alternatives of a role (the first present and not empty in a document wins).
    static func fields(_ candidates: [String], in samples: [DocumentFields], urls: Bool = false) -> [FieldPath] {
        found(candidates, in: samples).compactMap { path, _, values in
            var text = path
            if urls, let nested = values.lazy.compactMap({ value -> String? in
                if case .map(let map) = value { return PhotoValue.urlKeys.first { map[$0] != nil } }
                return nil
            }).first {
                text += ".\(nested)"
            }
            return try? FieldPath(parsing: text)
        }
    }

    /// The name fields, the fullest names first: a field whose values are two words or
    /// more (`fullName`: "Ada Lovelace") before a handle (`username`: "ada_l") even when
    /// the handle is in more documents; then by how many have it. The others follow as
    /// alternatives, for the documents without the first.
    static func nameFields(in samples: [DocumentFields]) -> [FieldPath] {
        struct Ranked { var path: String; var fullNames: Int; var count: Int; var order: Int }
        var ranked: [Ranked] = []
        for (index, entry) in found(nameFields, in: samples).enumerated() {
            var fullNames = 0
            for value in entry.values {
                guard case .string(let text) = value, !text.contains("@") else { continue }
                if text.split(separator: " ").count >= 2 { fullNames += 1 }
            }
            // Full names in at least half of the documents that have the field.
            let counted = fullNames * 2 >= max(entry.count, 1) ? fullNames : 0
            ranked.append(Ranked(path: entry.path, fullNames: counted, count: entry.count, order: index))
        }
        ranked.sort { a, b in
            if a.fullNames != b.fullNames { return a.fullNames > b.fullNames }
            if a.count != b.count { return a.count > b.count }
            return a.order < b.order
        }
        return ranked.compactMap { try? FieldPath(parsing: $0.path) }
    }

    /// How much a collection's samples look like people: the share with a name, with a
    /// photo, and with a mark of a person (an e-mail, a phone, a given or family name, a
    /// user id field, or an id Firebase Auth knows).
    struct PeopleShape: CustomStringConvertible {
        var documents = 0
        var names = 0
        var photos = 0
        var persons = 0
        var commonName = false

        /// A name or a photo, and a mark of people (or a name people collections go by):
        /// products with a name and an image, or days with a photo, are not people.
        var eligible: Bool { names + photos > 0 && (persons > 0 || commonName) }
        var score: Double {
            guard documents > 0 else { return 0 }
            let n = Double(documents)
            return Double(names) / n + Double(photos) / n + 1.5 * Double(persons) / n + (commonName ? 1 : 0)
        }

        var description: String {
            "of \(documents) sampled documents, \(names) have a name, \(photos) a photo, \(persons) an e-mail, phone or user id"
        }
    }

    static let personFields = ["email", "emailAddress", "mail", "phone", "phoneNumber", "mobile"] + givenNameFields + familyNameFields

    /// A Firebase Auth user id: 28 letters and digits, both cases (`P26HrXpTlZoqNbQbynw3Of8L10NL`).
    static func looksLikeAuthUID(_ id: String) -> Bool {
        id.utf8.count == 28 && id.utf8.allSatisfy { ($0 >= 48 && $0 <= 57) || ($0 >= 65 && $0 <= 90) || ($0 >= 97 && $0 <= 122) }
            && id.utf8.contains { $0 >= 65 && $0 <= 90 } && id.utf8.contains { $0 >= 97 && $0 <= 122 }
    }

    static func shape(_ samples: [(id: String, fields: DocumentFields)], name: String, authIDs: Set<String>) -> PeopleShape {
        var shape = PeopleShape(documents: samples.count)
        shape.commonName = userCollections.contains { $0.lowercased() == name.lowercased() } || ["players", "publicuserinfo", "publicprofiles", "public_profile", "customers", "students", "employees", "authors"].contains(name.lowercased())
        for (id, fields) in samples {
            func has(_ candidates: [String]) -> Bool {
                candidates.contains { resolve($0, in: fields).map { !$0.value.isEmpty } ?? false }
            }
            if has(nameFields) || has(givenNameFields) { shape.names += 1 }
            if has(photoFields) { shape.photos += 1 }
            let uid = idFields.lazy.compactMap { resolve($0, in: fields).flatMap { PeoplePlan.text($0.value) } }.first
            if has(personFields) || authIDs.contains(id) || uid == id || uid.map(authIDs.contains) == true || looksLikeAuthUID(id) { shape.persons += 1 }
        }
        return shape
    }

    /// The people's collection by what its documents look like: of those with a name or
    /// a photo (or whose ids Firebase Auth knows), the highest `PeopleShape.score`; the
    /// common names only add to it. nil when none qualifies.
    static func peopleCollection(_ samples: [String: [(id: String, fields: DocumentFields)]], order: [String], authIDs: Set<String>) -> (name: String, why: String)? {
        var best: (name: String, shape: PeopleShape)?
        for name in order {
            let shape = shape(samples[name] ?? [], name: name, authIDs: authIDs)
            let knownToAuth = !authIDs.isEmpty && (samples[name] ?? []).filter { authIDs.contains($0.id) }.count * 2 > shape.documents
            guard shape.eligible || knownToAuth else { continue }
            if shape.score > (best?.shape.score ?? 0) { best = (name, shape) }
        }
        return best.map { ($0.name, $0.shape.description) }
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
        plan.name = given(.name) ?? nameFields(in: samples)
        plan.givenName = given(.givenName) ?? field(givenNameFields, in: samples).map { [$0] } ?? []
        plan.familyName = given(.familyName) ?? field(familyNameFields, in: samples).map { [$0] } ?? []
        plan.photo = given(.photo) ?? fields(photoFields, in: samples, urls: true)
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
