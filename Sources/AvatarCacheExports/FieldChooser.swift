import AvatarCacheSupport
import Foundation
/// Chooses where the people and conversations are when the field map does not say: the
/// collection from the common names, and each field from the common names by how many
/// of the first documents (`sampleSize`) have it, NexusAI's names first on a tie. Names
/// seen across 24 real Firebase exports of 20 apps (docs/inputs.md, "Firebase and other apps' names").
enum FieldChooser {
    static let sampleSize = 200

    static let userCollections = ["users", "Users", "USERS", "profiles", "publicUsers", "userProfiles", "people", "members", "accounts", "user"]
    static let conversationCollections = ["conversations", "Conversations", "chats", "Chats", "chatRooms", "chatrooms", "rooms", "threads", "channels"]

    static let idFields = ["uid", "userId", "userID", "user_id", "id"]
    /// Names, full or given alone: English first (the names seen most), then the words of
    /// apps in Spanish, Portuguese, Italian, French, German, Polish, Turkish and Japanese.
    static let nameFields = ["displayName", "name", "fullName", "full_name", "display_name", "username", "userName", "nickname", "nickName",
                             "nombre", "nombreCompleto", "nome", "nomeCompleto", "nomComplet", "vollerName", "isim", "adSoyad", "adıSoyadı",
                             "imięNazwisko", "氏名", "名前", "ニックネーム"]
    static let givenNameFields = ["firstName", "first_name", "givenName", "given_name", "firstname",
                                  "primerNombre", "primeiroNome", "prénom", "prenom", "vorname", "imię", "imie", "ad", "adı", "名", "voornaam"]
    static let familyNameFields = ["lastName", "last_name", "familyName", "family_name", "surname", "lastname",
                                   "apellido", "apellidos", "sobrenome", "apelido", "cognome", "nom", "nomDeFamille", "nachname", "familienname",
                                   "nazwisko", "soyad", "soyadı", "soyadi", "姓", "苗字", "名字", "achternaam"]
    /// Name fields that often hold the given name alone (`name` + `surname`, `nombre` +
    /// `apellido`, `ad` + `soyad`): joined with a family name the document holds beside them.
    static let bareNameWords: Set<String> = ["name", "nombre", "nome", "isim", "名前", "naam", "navn", "namn", "nimi"]
    static let photoFields = ["profileImageUrl", "profilePhotoUrl", "photoPath", "avatarPath", "imagePath", "avatar_path", "photoURL", "photoUrl", "imageURL", "imageUrl", "profileImage", "profileImageURL",
                              "profilePictureUrl", "profilePictureURL", "profilePicture", "profilePicUrl", "profilePic", "pfpUrl", "pfp",
                              "avatarUrl", "avatarURL", "avatar", "photo", "picture", "image", "profile_img", "profile_image",
                              "profile_image_url", "profile_photo", "profilePhoto", "photos", "images", "imagePaths",
                              "foto", "fotoPerfil", "fotoUrl", "imagen", "imagenPerfil", "imagem", "immagine", "bild", "profilbild",
                              "zdjęcie", "zdjecie", "resim", "fotoğraf", "写真", "画像", "アイコン"]
    static let colorFields = ["avatarColorHex", "avatarColor", "color", "colour"]
    static let participantFields = ["participantIds", "participants", "userIds", "memberIds", "members", "users"]
    static let updatedAtFields = ["updatedAt", "lastMessageAt", "lastMessageTime", "lastActivity", "lastUpdated", "lastMessage.timestamp", "lastMessage.createdAt", "timestamp", "createdAt"]
    static let lastSenderFields = ["lastMessage.senderId", "lastMessage.sender", "lastMessage.senderUid", "lastSenderId", "lastMessageSenderId", "lastMessage.userId"]

    /// The first name of `candidates` that is a collection seen (exactly, then in any case),
    /// a top-level collection before a subcollection of that name.
    static func collection(_ candidates: [String], in seen: [String: Int]) -> String? {
        if let exact = candidates.lazy.compactMap({ group(named: $0, in: seen) }).first { return exact }
        let lowered = Set(candidates.map { $0.lowercased() })
        return seen.keys.sorted { ($0.split(separator: "/").count, $0) < ($1.split(separator: "/").count, $1) }
            .first { lowered.contains(String($0.split(separator: "/").last ?? "").lowercased()) }
    }

    /// The collection group a name means: the group itself (`users/public_profile`), else
    /// the groups it ends (`public_profile`), the shallowest first.
    static func group(named name: String, in seen: [String: Int]) -> String? {
        if seen[name] != nil { return name }
        let suffix = "/" + name
        return seen.keys.filter { $0.hasSuffix(suffix) }
            .min { ($0.split(separator: "/").count, $0) < ($1.split(separator: "/").count, $1) }
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
        // Names found through two candidates (photoURL, photoUrl) counted once per document.
        var seen: [String: Set<Int>] = [:]
        for candidate in candidates {
            for (index, fields) in samples.enumerated() {
                guard let (path, value) = resolve(candidate, in: fields), !value.isEmpty,
                      seen[path, default: []].insert(index).inserted else { continue }
                if found[path] == nil { order.append(path) }
                found[path, default: (0, [])].count += 1
                found[path]!.values.append(value)
            }
        }
        return order.enumerated().map { (index, path) in (path, found[path]!.count, found[path]!.values, index) }
            .sorted { $0.1 != $1.1 ? $0.1 > $1.1 : $0.3 < $1.3 }
            .map { ($0.0, $0.1, $0.2) }
    }

    /// The path among `candidates` present and not empty in the most samples (at least one).
    static func field(_ candidates: [String], in samples: [DocumentFields]) -> FieldPath? {
        found(candidates, in: samples).first.flatMap { try? FieldPath(parsing: $0.path) }
    }

    /// `path`, reaching into its maps' URL key (`profile_photo` → `profile_photo.downloadUrl`)
    /// when its values are maps holding one.
    static func urlPath(_ path: String, values: [DocumentValue]) -> FieldPath? {
        for value in values {
            if case .map(let map) = value, let key = PhotoValue.urlKeys.first(where: { map[$0] != nil }) {
                return try? FieldPath(parsing: "\(path).\(key)")
            }
        }
        return try? FieldPath(parsing: path)
    }

    /// A role's choice with what decided it, for the note and `inspect`: the paths in
    /// order, the evidence for the first, and the candidates passed over and why.
    struct RoleChoice: Sendable {
        var paths: [FieldPath] = []
        var evidence: String?
        var passed: [String] = []
        /// Paths whose one value every document shares (read only where no other is).
        var shared: Set<FieldPath> = []
    }

    /// The name fields, the fullest names first: a field whose values are two words or
    /// more (`fullName`: "Ada Lovelace") before a handle (`username`: "ada_l") even when
    /// the handle is in more documents; then by how many have it. The others follow as
    /// alternatives, for the documents without the first.
    static func nameFields(in samples: [DocumentFields]) -> [FieldPath] { nameChoice(in: samples).paths }

    /// `nameFields`, judged by the values too: a candidate whose values are mostly
    /// e-mail addresses, URLs, phone numbers, ids, dates, organisations' names or
    /// one-character placeholders, or one value shared by (nearly) every document, is no
    /// person's name whatever it is called (`ValueEvidence.nameVerdict`). When no field
    /// named as a name is left, a field of any name whose values read as people's names
    /// (`ValueEvidence.looksLikePersonName`) is taken.
    ///
    /// `authNames`: the Firebase Auth accounts' display names (lower case): a candidate
    /// whose values they are is confirmed, and comes first.
    static func nameChoice(in samples: [DocumentFields], authNames: Set<String> = []) -> RoleChoice {
        struct Ranked { var path: String; var fullNames: Int; var count: Int; var order: Int; var shared = false; var confirmed = 0 }
        var choice = RoleChoice()
        var ranked: [Ranked] = []
        var emails: [FieldPath] = []
        let named = found(nameCandidates(in: samples), in: samples)
        for (index, entry) in named.enumerated() {
            let texts = entry.values.compactMap(PeoplePlan.nameText)
            let verdict = ValueEvidence.nameVerdict(texts, collectionSize: samples.count)
            if verdict.kind != nil {
                choice.passed.append("\(entry.path) (\(verdict))")
                // E-mail addresses stay the last resort of a person with no name at all
                // (their initials still tell people apart).
                if verdict.kind == .email, let path = try? FieldPath(parsing: entry.path) { emails.append(path) }
                continue
            }
            // One value on every document (a company's): read only where no other name is,
            // so a collection whose only name is shared still has it.
            if verdict.shared != nil { choice.passed.append("\(entry.path) (\(verdict))") }
            let confirmed = authNames.isEmpty ? 0 : texts.filter { authNames.contains($0.trimmedWhitespace.lowercased()) }.count
            ranked.append(Ranked(path: entry.path, fullNames: countedFullNames(entry.values, count: entry.count), count: entry.count, order: index,
                                 shared: verdict.shared != nil, confirmed: confirmed))
        }
        var byValue = false
        if ranked.isEmpty {
            let taken = Set(named.map(\.path))
            for (index, entry) in personNameFields(in: samples).enumerated() where !taken.contains(entry.path) {
                ranked.append(Ranked(path: entry.path, fullNames: countedFullNames(entry.values, count: entry.count), count: entry.count, order: index))
                byValue = true
            }
        }
        ranked.sort { a, b in
            if a.shared != b.shared { return !a.shared }
            // Confirmed by the accounts when one candidate is and the other is not.
            if (a.confirmed > 0) != (b.confirmed > 0) { return a.confirmed > 0 }
            if a.fullNames != b.fullNames { return a.fullNames > b.fullNames }
            if a.count != b.count { return a.count > b.count }
            return a.order < b.order
        }
        choice.paths = ranked.compactMap { try? FieldPath(parsing: $0.path) } + emails
        choice.shared = Set(ranked.filter(\.shared).compactMap { try? FieldPath(parsing: $0.path) })
        if let best = ranked.first {
            choice.evidence = "on \(best.count) of \(samples.count) documents, \(best.fullNames) of them full names" + (byValue ? ", read as people's names by their values" : "")
                + (best.confirmed > 0 ? ", \(best.confirmed) the display name of a Firebase Auth account" : "")
        }
        choice.passed = ranked.dropFirst().filter { !$0.shared }.prefix(3).map { "\($0.path) (on \($0.count), \($0.fullNames) full names)" } + choice.passed
        return choice
    }

    /// How many of `values` are full names (two words or more, not an e-mail), when they
    /// are at least half of the `count` documents with the field; else 0.
    private static func countedFullNames(_ values: [DocumentValue], count: Int) -> Int {
        var fullNames = 0
        for value in values {
            guard case .string(let text) = value, !text.contains("@") else { continue }
            if text.split(separator: " ").count >= 2 { fullNames += 1 }
        }
        return fullNames * 2 >= max(count, 1) ? fullNames : 0
    }

    /// Top-level text fields of any name whose values read as people's names: on half the
    /// documents or more, eight in ten of their values a name, half of them two words or
    /// more (or a name in a script written without spaces), nearly all different.
    /// Fields named as something else than a person (`jobTitle: "Software Engineer"`,
    /// `city: "New York"`) are not taken for a name by their values.
    static func personNameFields(in samples: [DocumentFields]) -> [(path: String, count: Int, values: [DocumentValue])] {
        let notNames = ["title", "job", "role", "position", "city", "country", "state", "address", "street", "company", "team", "department",
                        "status", "description", "bio", "about", "label", "category", "type", "location", "school", "org", "group", "message"]
        var order: [String] = []
        for fields in samples {
            for (name, value) in zip(fields.names, fields.values) where !order.contains(name) && !name.contains(".") && !name.contains("[") {
                guard !notNames.contains(where: normalized(name[...]).contains) else { continue }
                if case .string = value { order.append(name) }
            }
        }
        var result: [(path: String, count: Int, values: [DocumentValue])] = []
        for name in order {
            let values = samples.compactMap { $0[name] }.filter { !$0.isEmpty }
            let texts = values.compactMap { value -> String? in if case .string(let text) = value { return text } else { return nil } }
            guard !texts.isEmpty, texts.count * 2 >= samples.count else { continue }
            let names = texts.filter(ValueEvidence.looksLikePersonName)
            let full = names.filter { $0.split(whereSeparator: \.isWhitespace).count >= 2 || !($0.first?.isCased ?? true) }
            guard names.count * 10 >= texts.count * 8, full.count * 2 >= texts.count,
                  Set(texts.map { $0.lowercased() }).count * 10 >= texts.count * 8 || texts.count < 4 else { continue }
            result.append((name, texts.count, values))
        }
        return result.sorted { $0.count > $1.count }
    }

    /// How much a collection's samples look like people: the share with a name, with a
    /// photo, and with a mark of a person (an e-mail, a phone, a given or family name, a
    /// user id field, or an id Firebase Auth knows); and whose documents they are, as a
    /// person reading them tells: the accounts' own, messages, or an address book.
    struct PeopleShape: CustomStringConvertible {
        var documents = 0
        var names = 0
        var photos = 0
        var persons = 0
        var commonName = false
        /// Documents that are each a different Firebase Auth account's (by the document
        /// id, a user id field or the e-mail), and by which.
        var accounts = 0
        var accountsBy: [String] = []
        /// Documents with a mark of an account of their own: an id Auth knows or shaped as
        /// Auth's, a user id field equal to the document id.
        var ownAccounts = 0
        /// Documents that look like messages: a body, and a subject or a time.
        var messages = 0
        /// Documents that look like an address book of other people: a phone and a
        /// company or trade.
        var addressBook = 0
        /// The user id fields' values that are not the document's own id (a membership's
        /// `userId`): the person the document is about.
        var userIDs: [String] = []
        /// Another collection most of whose documents' ids these documents name by
        /// `userId`: the people, these records about them (`organizationMembers` of `users`).
        var about: String?
        /// Documents of a site's texts: a field holding its own name (`nombre: "Nombre"`),
        /// or ids that are language codes (`es`, `en-US`).
        var labels = 0

        /// A name or a photo, and a mark of people (or a name people collections go by):
        /// products with a name and an image, or days with a photo, are not people; nor a
        /// site's texts.
        var eligible: Bool { names + photos > 0 && (persons > 0 || commonName) && !isSiteTexts }
        /// Documents the collection holds (not only those sampled).
        var total = 0

        var isAccounts: Bool { accounts * 2 > documents }
        var isMessages: Bool { messages * 2 > documents }
        var isAddressBook: Bool { addressBook * 2 > documents && ownAccounts == 0 && !isAccounts }
        var isSiteTexts: Bool { labels * 2 > documents }
        /// What decides before the score: the accounts' own documents first, messages and
        /// an address book last.
        var rank: Int { isAccounts ? 2 : (isMessages || isAddressBook) ? 0 : 1 }

        /// The shares, the name, and the size: of two collections alike, the larger is the
        /// people (1,423 `user` documents rather than 1 `employee`).
        var score: Double {
            guard documents > 0 else { return 0 }
            let n = Double(documents)
            return Double(names) / n + Double(photos) / n + 1.5 * Double(persons) / n + (commonName ? 1 : 0)
                + 0.25 * log10(Double(max(total, documents)))
        }

        var description: String {
            "of \(documents) sampled documents, \(names) have a name, \(photos) a photo, \(persons) an e-mail, phone or user id"
        }

        /// The evidence that ranks it, for the note; nil when none does.
        var evidence: String? {
            if isAccounts { return "\(accounts) of \(documents) are each a Firebase Auth account's own (by \(accountsBy.joined(separator: ", ")))" }
            if isMessages { return "\(messages) of \(documents) look like messages (a body, and a subject or a time)" }
            if isAddressBook { return "\(addressBook) of \(documents) look like an address book of other people (a phone and a company or trade, or an address book's name, no account)" }
            return nil
        }
    }

    static let personFields = ["email", "emailAddress", "mail", "phone", "phoneNumber", "mobile",
                               "correo", "correoElectronico", "eposta", "telefono", "teléfono", "telefone", "telefon", "celular", "movil",
                               "móvil", "cellulare", "handy", "メール", "電話番号"] + givenNameFields + familyNameFields
    static let emailFields = ["email", "emailAddress", "mail", "correo", "correoElectronico", "eposta"]
    static let phoneFields = ["phone", "phoneNumber", "mobile", "tel", "telephone", "cell", "cellPhone", "mobilePhone", "telefono", "teléfono",
                              "telefone", "telefon", "celular", "movil", "móvil", "cellulare", "handy", "電話番号"]
    /// What an address book says of the people in it, and a person's own profile seldom.
    static let tradeFields = ["company", "companyName", "organization", "organisation", "org", "business", "businessName", "employer",
                              "empresa", "azienda", "firma", "entreprise", "société", "societe", "clinic", "practice", "profession",
                              "occupation", "specialty", "speciality", "specialization", "jobTitle", "job", "trade", "service",
                              "category", "type", "kind", "tipo", "profesion", "profesión", "professione", "beruf"]
    static let messageBodyFields = ["message", "body", "content", "text", "msg", "mensaje", "mensagem", "messaggio", "nachricht",
                                    "comment", "comments", "comentario", "commentaire", "inquiry", "enquiry", "question", "feedback"]
    static let messageSubjectFields = ["subject", "asunto", "assunto", "oggetto", "betreff", "sujet", "topic"]
    static let messageTimeFields = ["createdAt", "created_at", "timestamp", "date", "sentAt", "sent", "created", "time", "submittedAt",
                                    "fecha", "datum"]
    static let addressFields = ["address", "street", "dirección", "direccion", "endereço", "endereco", "indirizzo", "adresse", "住所"]
    /// Words an address book is named with (`contacts`, `contactos`, `rubrica`).
    static let addressBookWords = ["contact", "addressbook", "phonebook", "kontakt", "contato", "contatti", "rubrica", "adressbuch", "agenda"]
    /// Words a collection of messages is named with (`contact_message`, `mensajes`).
    static let messageWords = ["message", "mensaje", "mensagem", "messaggi", "nachricht", "inquir", "enquir", "feedback", "submission", "contactform"]

    /// A Firebase Auth user id: 28 letters and digits, both cases (`P26HrXpTlZoqNbQbynw3Of8L10NL`).
    static func looksLikeAuthUID(_ id: String) -> Bool {
        id.utf8.count == 28 && id.utf8.allSatisfy { ($0 >= 48 && $0 <= 57) || ($0 >= 65 && $0 <= 90) || ($0 >= 97 && $0 <= 122) }
            && id.utf8.contains { $0 >= 65 && $0 <= 90 } && id.utf8.contains { $0 >= 97 && $0 <= 122 }
    }

    /// A language code as a site's texts are keyed by (`es`, `en-US`, `pt_BR`).
    static func looksLikeLanguageCode(_ id: String) -> Bool {
        let parts = id.split(whereSeparator: { $0 == "-" || $0 == "_" })
        guard (1...2).contains(parts.count), parts[0].count == 2, parts[0].allSatisfy({ $0.isASCII && $0.isLowercase }) else { return false }
        return parts.count == 1 || (parts[1].count == 2 && parts[1].allSatisfy { $0.isASCII && $0.isLetter })
    }

    /// Words a collection of people is named with (`v2_players`, `participants`,
    /// `publicUserInfo`), matched in its last name, case-blind.
    static let peopleWords = ["user", "profile", "people", "person", "member", "account", "player", "participant", "customer",
                              "student", "employee", "author", "contact", "friend", "staff", "patient", "client", "athlete",
                              "volunteer", "driver", "teacher", "doctor", "artist", "guest", "attendee", "speaker", "creator",
                              "subscriber", "follower", "learner", "worker", "candidate"]

    static func namedForPeople(_ group: String) -> Bool {
        let name = normalized(group.split(separator: "/").last ?? "")
        return peopleWords.contains { name.contains($0) }
    }

    /// Fields that name a user by their id (a plain `id` names anything).
    static let userIDFields = ["uid", "userId", "userID", "user_id"]

    /// `byValue`: a document's values mark it too, whatever its fields are called: a
    /// person's name, an image, an e-mail address or a phone number among them (for
    /// exports whose names no list knows).
    static func shape(_ samples: [(id: String, fields: DocumentFields)], name: String, authIDs: Set<String>,
                      authEmails: Set<String> = [], byValue: Bool = false) -> PeopleShape {
        var shape = PeopleShape(documents: samples.count)
        shape.commonName = userCollections.contains { $0.lowercased() == name.lowercased() } || namedForPeople(name)
        let lastName = normalized(name.split(separator: "/").last ?? "")
        let namedForMessages = messageWords.contains { lastName.contains($0) }
        let namedAsAddressBook = addressBookWords.contains { lastName.contains($0) }
        var accountsSeen = Set<String>()
        var by = Set<String>()
        for (id, fields) in samples {
            func has(_ candidates: [String]) -> Bool {
                candidates.contains { resolve($0, in: fields).map { !$0.value.isEmpty } ?? false }
            }
            func text(_ candidates: [String]) -> String? {
                candidates.lazy.compactMap { resolve($0, in: fields).flatMap { PeoplePlan.text($0.value) } }.first { !$0.isEmpty }
            }
            let names = nameCandidates(in: [fields])
            let texts = byValue ? fields.values.compactMap { value -> String? in if case .string(let text) = value { return text } else { return nil } } : []
            if has(names) || has(givenNameFields) || texts.contains(where: { ValueEvidence.looksLikePersonName($0) && $0.contains(" ") }) { shape.names += 1 }
            if has(photoCandidates(in: [fields])) || texts.contains(where: ValueEvidence.looksLikePhoto) { shape.photos += 1 }
            let uid = userIDFields.lazy.compactMap { resolve($0, in: fields).flatMap { PeoplePlan.text($0.value) } }.first
            let markedByValue = texts.contains { [.email, .phone].contains(ValueEvidence.kind($0)) }
            if has(personFields) || markedByValue || authIDs.contains(id) || uid == id || uid.map(authIDs.contains) == true || looksLikeAuthUID(id) { shape.persons += 1 }
            if authIDs.contains(id) || looksLikeAuthUID(id) || (uid == id && !id.isEmpty) { shape.ownAccounts += 1 }
            // Each a different account's: by the id, a user id field, the e-mail.
            var account: (key: String, by: String)?
            if authIDs.contains(id) { account = (id, "id") }
            else if let uid, authIDs.contains(uid) { account = (uid, "user id field") }
            else if let email = text(emailFields)?.lowercased(), authEmails.contains(email) { account = ("email:" + email, "e-mail") }
            if let account, accountsSeen.insert(account.key).inserted {
                shape.accounts += 1
                by.insert(account.by)
            }
            let hasTime = has(messageTimeFields) || fields.values.contains { if case .timestamp = $0 { return true } else { return false } }
            // A body: a message's own field, or one named as one (`error_message`, `messageBody`).
            let hasBody = text(messageBodyFields) != nil || zip(fields.names, fields.values).contains { key, value in
                guard case .string(let text) = value, !text.isEmpty else { return false }
                let name = normalized(key[...])
                return name.hasSuffix("message") || name.hasPrefix("message") || name.hasSuffix("body")
            }
            if hasBody, has(messageSubjectFields) || hasTime || namedForMessages { shape.messages += 1 }
            if has(phoneFields), text(tradeFields) != nil || (namedAsAddressBook && (has(addressFields) || has(emailFields))) { shape.addressBook += 1 }
            if let uid, uid != id { shape.userIDs.append(uid) }
            let ownLabel = zip(fields.names, fields.values).contains { key, value in
                guard case .string(let text) = value, !text.isEmpty else { return false }
                return text.folding(options: [.caseInsensitive, .diacriticInsensitive], locale: nil).filter { !$0.isWhitespace && $0 != "_" && $0 != "-" }
                    == key.folding(options: [.caseInsensitive, .diacriticInsensitive], locale: nil).filter { !$0.isWhitespace && $0 != "_" && $0 != "-" }
                    && names.contains { normalized($0[...]) == normalized(key[...]) }
            }
            if ownLabel || looksLikeLanguageCode(id) { shape.labels += 1 }
        }
        shape.accountsBy = ["id", "user id field", "e-mail"].filter(by.contains)
        return shape
    }

    // MARK: Fields named as no list knows them

    /// The common name fields, then the samples' other fields named as a name is
    /// (`player_handle`, `screenName`, `player_name`): ending in "name" or "handle", not a
    /// given or family name nor the name of a thing.
    static func nameCandidates(in samples: [DocumentFields]) -> [String] {
        let known = Set(nameFields.map { normalized($0[...]) } + givenNameFields.map { normalized($0[...]) } + familyNameFields.map { normalized($0[...]) })
        let things = ["file", "host", "path", "class", "type", "bucket", "collection", "middle", "company", "org", "team", "group",
                      "product", "city", "country", "device", "app", "event", "room", "channel", "place", "venue", "school", "brand",
                      "item", "project", "category", "tag", "domain", "model", "field", "key", "table", "server", "sender", "receiver",
                      "recipient", "owner", "creator", "author", "parent", "pet", "dog", "cat", "animal", "display",
                      "second", "maiden", "father", "mother", "spouse", "guardian"]
        var extra: [String] = []
        for fields in samples {
            for (name, value) in zip(fields.names, fields.values) where !extra.contains(name) {
                guard case .string = value else { continue }
                let key = normalized(name[...])
                guard !known.contains(key) else { continue }
                if key.hasSuffix("name") || key.hasSuffix("handle") {
                    let head = key.hasSuffix("name") ? key.dropLast(4) : key.dropLast(6)
                    if things.contains(where: { head.hasSuffix($0) }) { continue }
                    extra.append(name)
                } else if let word = romanceNameWords.first(where: { key.hasPrefix($0) }), romanceWhose.contains(String(key.dropFirst(word.count))) {
                    extra.append(name)
                }
            }
        }
        return nameFields + extra
    }

    /// Spanish, Portuguese, Italian and French put the name first (`nombreContacto`,
    /// `nomeUtente`, `nomUtilisateur`): a name of these words' people is a person's name.
    static let romanceNameWords = ["nombre", "nome", "nom"]
    static let romanceWhose: Set<String> = ["contacto", "contato", "contatto", "contact", "usuario", "usuário", "utente", "utilisateur",
                                            "completo", "complet", "cliente", "client", "persona", "pessoa", "personne", "miembro", "membro",
                                            "membre", "socio", "sócio", "alumno", "aluno", "alunno", "estudiante", "élève", "eleve",
                                            "paciente", "paziente", "patient", "empleado", "funcionario", "funcionário", "dipendente",
                                            "employé", "employe", "jugador", "jogador", "giocatore", "joueur", "perfil", "profilo", "profil",
                                            "mostrado", "visible", "publico", "público", "pubblico", "public", "real", "apellido", "apellidos"]

    /// Words a photo field is named with (`profilePhotoLink`, `iconPath`, `pictureURL`).
    static let photoWords = ["photo", "avatar", "image", "picture", "pic", "icon", "pfp", "img", "thumbnail", "portrait", "headshot",
                             "foto", "imagen", "imagem", "immagine", "bild", "zdjęcie", "zdjecie", "resim", "写真", "画像", "アイコン"]
    static let notPhotoWords = ["cover", "banner", "background", "header", "wallpaper", "count", "size", "width", "height", "type", "alt"]

    /// The common photo fields, then the samples' other fields named as a photo is whose
    /// values are URLs (or Storage references).
    static func photoCandidates(in samples: [DocumentFields]) -> [String] {
        let known = Set(photoFields.map { normalized($0[...]) })
        var extra: [String] = []
        for fields in samples {
            for (name, value) in zip(fields.names, fields.values) where !extra.contains(name) {
                let key = normalized(name[...])
                guard !known.contains(key), photoWords.contains(where: { key.contains($0) }), !notPhotoWords.contains(where: { key.contains($0) }),
                      isUsablePhoto(value) else { continue }
                extra.append(name)
            }
        }
        return photoFields + extra
    }

    /// A value a photo can be taken from: an http(s), `gs://` or `data:` URL, a map
    /// holding one, an array whose first element is one.
    static func isUsablePhoto(_ value: DocumentValue) -> Bool {
        switch value {
        case .string(let text):
            let lower = text.trimmingCharacters(in: .whitespaces).prefix(8).lowercased()
            return lower.hasPrefix("http://") || lower.hasPrefix("https://") || lower.hasPrefix("gs://") || lower.hasPrefix("data:")
        case .map(let fields):
            return PhotoValue.urlKeys.contains { fields[$0].map(isUsablePhoto) ?? false } || fields["fullPath"] != nil
        case .array(let elements):
            return elements.first.map(isUsablePhoto) ?? false
        case .bytes(let bytes):
            return !bytes.isEmpty
        default:
            return false
        }
    }

    /// The photo fields, those whose values most often are a photo one can take first
    /// (a field of URLs before one of relative paths, however common); fields of no usable
    /// value only when no field has one (they are then reported).
    static func photoFields(in samples: [DocumentFields]) -> [FieldPath] { photoChoice(in: samples).paths }

    /// `photoFields`, judged by the values too: of the usable ones, a field whose values
    /// are images (`ValueEvidence.looksLikePhoto`: an image's URL, a Storage path, a data
    /// URI) before one of pages; when no field is named as a photo, a field of any name
    /// whose values are images.
    static func photoChoice(in samples: [DocumentFields]) -> RoleChoice {
        struct Ranked { var path: String; var values: [DocumentValue]; var count: Int; var usable: Int; var images: Int; var pages: Int; var shared: Bool; var order: Int }
        var ranked: [Ranked] = []
        var entries = found(photoCandidates(in: samples), in: samples)
        var byValue = false
        if entries.isEmpty {
            entries = imageFields(in: samples)
            byValue = !entries.isEmpty
        }
        for (index, entry) in entries.enumerated() {
            let texts = entry.values.compactMap { value -> String? in if case .string(let text) = value { return text } else { return nil } }
            let sharedValue = Dictionary(grouping: texts, by: { $0 }).values.map(\.count).max() ?? 0
            ranked.append(Ranked(path: entry.path, values: entry.values, count: entry.count, usable: entry.values.filter(isUsablePhoto).count,
                                 images: entry.values.filter(isImage).count, pages: texts.filter(ValueEvidence.looksLikePage).count,
                                 shared: texts.count >= 4 && sharedValue * 10 >= max(samples.count, texts.count) * 9, order: index))
        }
        ranked.sort { a, b in
            // Among usable fields: each person's own before one default for everyone, and
            // images before web pages.
            if a.usable > 0, b.usable > 0 {
                if a.shared != b.shared { return !a.shared }
                let aPages = a.pages * 2 > a.usable, bPages = b.pages * 2 > b.usable
                if aPages != bPages { return !aPages }
            }
            if a.usable != b.usable { return a.usable > b.usable }
            if a.count != b.count { return a.count > b.count }
            return a.order < b.order
        }
        let anyUsable = ranked.contains { $0.usable > 0 }
        var choice = RoleChoice()
        for entry in ranked where !anyUsable || entry.usable > 0 {
            if let path = urlPath(entry.path, values: entry.values) { choice.paths.append(path) }
        }
        func described(_ entry: Ranked) -> String {
            "\(entry.images) of them images, \(entry.usable) usable" + (entry.pages > 0 ? ", \(entry.pages) web pages" : "") + (entry.shared ? ", one value on nearly all" : "")
        }
        if let best = ranked.first {
            choice.evidence = "on \(best.count) of \(samples.count) documents, \(described(best))" + (byValue ? " (found by its values)" : "")
        }
        choice.passed = ranked.dropFirst().prefix(3).map { "\($0.path) (on \($0.count), \(described($0)))" }
        return choice
    }

    /// A photo value that is an image (not a page, not a bare word): bytes, or text
    /// (in a map's URL key or an array's first element) that `ValueEvidence.looksLikePhoto`.
    static func isImage(_ value: DocumentValue) -> Bool {
        switch value {
        case .string(let text): return ValueEvidence.looksLikePhoto(text)
        case .map(let fields): return PhotoValue.urlKeys.contains { fields[$0].map(isImage) ?? false } || fields["fullPath"] != nil
        case .array(let elements): return elements.first.map(isImage) ?? false
        case .bytes(let bytes): return !bytes.isEmpty
        default: return false
        }
    }

    /// Top-level fields of any name (not a cover or a banner) whose values are images on
    /// half the documents or more.
    static func imageFields(in samples: [DocumentFields]) -> [(path: String, count: Int, values: [DocumentValue])] {
        var order: [String] = []
        for fields in samples {
            for name in fields.names where !order.contains(name) && !name.contains(".") && !name.contains("[") { order.append(name) }
        }
        var result: [(path: String, count: Int, values: [DocumentValue])] = []
        for name in order where !notPhotoWords.contains(where: { normalized(name[...]).contains($0) }) {
            let values = samples.compactMap { $0[name] }.filter { !$0.isEmpty }
            let images = values.filter { isImage($0) && isUsablePhoto($0) }.count
            guard images > 0, images * 2 >= samples.count else { continue }
            result.append((name, values.count, values))
        }
        return result.sorted { $0.count > $1.count }
    }

    /// The people's collection by what its documents look like: of those with a name or
    /// a photo (or whose ids Firebase Auth knows), the accounts' own documents first and
    /// messages or an address book of other people last (`PeopleShape.rank`), then the
    /// highest `PeopleShape.score`; the common names only add to it. nil when none
    /// qualifies. `why` says what the documents hold and which evidence decided.
    static func peopleCollection(_ samples: [String: [(id: String, fields: DocumentFields)]], order: [String], counts: [String: Int] = [:],
                                 authIDs: Set<String>, authEmails: Set<String> = []) -> (name: String, why: String)? {
        var candidates: [(name: String, shape: PeopleShape)] = []
        // By the fields' names first; by the values when no collection is named as people's.
        for byValue in [false, true] where candidates.isEmpty {
            for name in order {
                var shape = shape(samples[name] ?? [], name: name, authIDs: authIDs, authEmails: authEmails, byValue: byValue)
                shape.total = counts[name] ?? shape.documents
                let knownToAuth = !authIDs.isEmpty && (samples[name] ?? []).filter { authIDs.contains($0.id) }.count * 2 > shape.documents
                guard shape.eligible || knownToAuth else { continue }
                candidates.append((name, shape))
            }
        }
        // Records about the people of another candidate (a membership naming its user by
        // `userId`) are not the people: that collection is.
        for index in candidates.indices {
            let ids = candidates[index].shape.userIDs
            guard ids.count * 2 > candidates[index].shape.documents else { continue }
            for other in candidates where other.name != candidates[index].name {
                let theirs = Set((samples[other.name] ?? []).map(\.id))
                if ids.filter(theirs.contains).count * 2 > candidates[index].shape.documents {
                    candidates[index].shape.about = other.name
                    break
                }
            }
        }
        var best: (name: String, shape: PeopleShape)?
        for candidate in candidates where candidate.shape.score > 0 && candidate.shape.about == nil {
            guard let current = best else { best = candidate; continue }
            if (candidate.shape.rank, candidate.shape.score) > (current.shape.rank, current.shape.score) { best = candidate }
        }
        guard let best = best ?? candidates.first(where: { $0.shape.score > 0 }) else { return nil }
        var why = best.shape.description
        if let evidence = best.shape.evidence, best.shape.rank == 2 || candidates.contains(where: { $0.shape.rank != best.shape.rank }) {
            why += "; \(evidence)"
        }
        // Those the evidence put behind, though they scored higher.
        let passed = candidates.filter { $0.name != best.name && ($0.shape.rank < best.shape.rank || $0.shape.about != nil) && $0.shape.score >= best.shape.score * 0.5 }
        for other in passed.prefix(3) {
            let evidence: String
            if let about = other.shape.about {
                evidence = "\(other.shape.userIDs.count) of \(other.shape.documents) name a person of \"\(about)\" by a user id field"
            } else {
                evidence = other.shape.evidence ?? "of \(other.shape.documents) sampled documents, none an account's own"
            }
            why += "; not \"\(other.name)\": " + evidence
        }
        return (best.name, why)
    }

    /// Fills the roles the map leaves open from `samples`.
    static func plan(_ map: FieldMap, samples: [DocumentFields], documentIDs: [String], idFromRecord: Bool, authNames: Set<String> = []) -> PeoplePlan {
        func given(_ key: FieldMap.Key) -> [FieldPath]? { map[key]?.compactMap(\.first) }
        var plan = PeoplePlan()
        if let id = given(.id) {
            plan.id = id
        } else if idFromRecord {
            plan.id = [FieldPath(key: "id")]
        } else if let field = field(Array(idFields.dropLast()), in: samples) {
            // A user id kept in the document (its id being a random one): the id other
            // documents and Firebase Auth know the person by, when most documents have it.
            let have = samples.filter { field.value(in: $0).flatMap(PeoplePlan.text).map { !$0.isEmpty } ?? false }.count
            let differs = zip(samples, documentIDs).contains { fields, id in field.value(in: fields).flatMap(PeoplePlan.text) != id }
            if have * 10 >= samples.count * 9 && differs { plan.id = [field] }
        }
        var sharedNames: Set<FieldPath> = []
        if let name = given(.name) {
            plan.name = name
        } else {
            let choice = nameChoice(in: samples, authNames: authNames)
            sharedNames = choice.shared
            plan.name = choice.paths
            plan.evidence[.name] = choice.evidence
            plan.passed[.name] = choice.passed
        }
        plan.givenName = given(.givenName) ?? field(givenNameFields, in: samples).map { [$0] } ?? []
        plan.familyName = given(.familyName) ?? field(familyNameFields, in: samples).map { [$0] } ?? []
        // What the operator maps wins over what the chooser finds.
        plan.joinsBareName = given(.name) == nil
        plan.givenAndFamilyFirst = given(.name) == nil && (given(.givenName) != nil || given(.familyName) != nil)
        if given(.name) == nil, !plan.givenAndFamilyFirst, let givenPath = plan.givenName.first, let familyPath = plan.familyName.first {
            // Coverage counts: a given and a family name on (nearly) every document name the
            // people before a name field on fewer (an old spelling left on one of them).
            func has(_ path: FieldPath, _ fields: DocumentFields) -> Bool { path.value(in: fields).map { !$0.isEmpty } ?? false }
            let both = samples.filter { has(givenPath, $0) && has(familyPath, $0) }.count
            let named = samples.filter { fields in plan.name.contains { !sharedNames.contains($0) && has($0, fields) } }.count
            if both * 10 >= samples.count * 9, both > named {
                plan.givenAndFamilyFirst = true
                plan.evidence[.name] = "a given and a family name on \(both) of \(samples.count) documents, a name field on \(named)"
            }
        }
        if let photo = given(.photo) {
            plan.photo = photo
        } else {
            let choice = photoChoice(in: samples)
            plan.photo = choice.paths
            plan.evidence[.photo] = choice.evidence
            plan.passed[.photo] = choice.passed
        }
        plan.color = given(.color) ?? field(colorFields, in: samples).map { [$0] } ?? []
        return plan
    }

    /// What a person reading the log needs to know of a plan: `id = uid, name = displayName, …`.
    static func describe(_ plan: PeoplePlan) -> String {
        func paths(_ paths: [FieldPath]) -> String { paths.isEmpty ? "none" : paths.map(\.text).joined(separator: "|") }
        var parts = ["id=\(plan.id.map(paths) ?? "the document id")" + (plan.evidence[.id].map { " (\($0))" } ?? "")]
        if plan.givenAndFamilyFirst {
            parts.append("given-name=\(paths(plan.givenName))")
            parts.append("family-name=\(paths(plan.familyName))")
            parts.append("name=\(paths(plan.name)) where they are absent")
        } else {
            parts.append("name=\(paths(plan.name))")
            if !plan.givenName.isEmpty || !plan.familyName.isEmpty {
                parts.append("given-name=\(paths(plan.givenName))")
                parts.append("family-name=\(paths(plan.familyName))")
            }
        }
        parts.append("photo=\(paths(plan.photo))")
        parts.append("color=\(paths(plan.color))")
        return parts.joined(separator: ", ")
    }

}
