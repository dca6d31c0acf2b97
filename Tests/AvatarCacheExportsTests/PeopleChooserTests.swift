import Foundation
import Testing
@testable import AvatarCacheExports
@testable import AvatarCacheModel
import AvatarCacheTestKit

/// The people found without a map as a person reading an app's export finds them, in the
/// languages apps are written in (issue 60): a family name in a field of its own joined
/// to the name, name and photo fields in other languages, a name held as a map, the
/// operator's map first; the collection of the accounts' own documents before an address
/// book or messages; what an emulator imports is what is read; a site's texts are not people.
@Suite final class PeopleChooserTests {
    let scratch: URL

    init() throws { scratch = try Fixtures.temporaryDirectory("people-chooser") }

    deinit { try? FileManager.default.removeItem(at: scratch) }

    /// An emulator export of `documents` (by path: `users/u1`, `clubs/c1/members/m1`),
    /// with Auth accounts (`localId`, `email`) when given.
    func export(_ documents: [(path: String, fields: [String: Any])], auth: [(id: String, email: String)] = []) throws -> String {
        let json = scratch.appendingPathComponent("\(UUID().uuidString).json")
        // In order: JSONSerialization does not keep an object's order, so the documents are written one by one.
        var text = "{"
        for (index, document) in documents.enumerated() {
            let fields = try JSONSerialization.data(withJSONObject: document.fields, options: [.sortedKeys])
            text += (index == 0 ? "" : ",") + "\"\(document.path)\":" + String(decoding: fields, as: UTF8.self)
        }
        try Data((text + "}").utf8).write(to: json)
        let out = try Fixtures.generateFirestoreExport(["--documents", json.path, "--photo-base", ""], in: scratch)
        if !auth.isEmpty {
            try FileManager.default.createDirectory(atPath: out + "/auth_export", withIntermediateDirectories: true)
            let users = auth.map { ["localId": $0.id, "email": $0.email, "passwordHash": "fakeHash:salt=x:password=secret", "providerUserInfo": []] as [String: Any] }
            try JSONSerialization.data(withJSONObject: ["kind": "identitytoolkit#DownloadAccountResponse", "users": users])
                .write(to: URL(fileURLWithPath: out + "/auth_export/accounts.json"))
        }
        return out
    }

    func read(_ path: String, map: [String] = []) throws -> Fixtures.ReadResult {
        try Fixtures.readAll(FirestoreReader(path: path, map: try FieldMap(parsing: map)))
    }

    func names(_ read: Fixtures.ReadResult) -> [String: String] {
        Dictionary(read.profiles.map { ($0.id, $0.displayName) }, uniquingKeysWith: { first, _ in first })
    }

    func peopleNote(_ read: Fixtures.ReadResult) throws -> String {
        try #require(read.notes.first { $0.contains("people from") }, "\(read.notes)")
    }

    /// A random document id as Firestore makes them (20 letters and digits).
    func randomID(_ seed: Int) -> String {
        var random = SeededRandom(seed: UInt64(seed + 1))
        let letters = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
        return String((0..<20).map { _ in letters[random.below(letters.count)] })
    }

    // MARK: Names in any language

    /// A given name in a name field and the family name in another, in the words of
    /// apps in nine languages, in a collection group: joined as the language writes
    /// them, without a map and with one.
    @Test(arguments: [("name", "surname", "Luca", "Begni", "Luca Begni"), ("nombre", "apellido", "Lucía", "García", "Lucía García"),
                      ("nome", "sobrenome", "João", "Silva", "João Silva"), ("nome", "cognome", "Giulia", "Rossi", "Giulia Rossi"),
                      ("vorname", "nachname", "Jürgen", "Müller", "Jürgen Müller"), ("prénom", "nom", "Élodie", "Dupont", "Élodie Dupont"),
                      ("imię", "nazwisko", "Zofia", "Nowak", "Zofia Nowak"), ("ad", "soyad", "Ayşe", "Yılmaz", "Ayşe Yılmaz"),
                      ("名前", "苗字", "太郎", "山田", "山田太郎")])
    func aGivenAndAFamilyNameInAnyLanguageAreJoined(given: String, family: String, givenValue: String, familyValue: String, expected: String) throws {
        var documents: [(path: String, fields: [String: Any])] = []
        for index in 0..<6 {
            documents.append(("clubs/c\(index % 2)/membri/m\(index)", [given: givenValue, family: familyValue, "email": "m\(index)@example.com"]))
        }
        documents.append(("clubs/c0", ["title": "Circolo"]))
        let out = try export(documents)
        let guessed = try read(out)
        #expect(Set(names(guessed).values) == [expected], "\(guessed.notes)")
        #expect(guessed.profiles.count == 6 && guessed.bad.isEmpty, "\(guessed.bad)")
        #expect(try peopleNote(guessed).contains("collection \"clubs/membri\""))
        let mapped = try read(out, map: ["users=membri", "given-name=\(given)", "family-name=\(family)"])
        #expect(Set(names(mapped).values) == [expected], "\(mapped.notes)")
    }

    /// A name already whole beside its family name is not joined twice; a name the
    /// operator maps is read as it is.
    @Test func aWholeNameIsNotJoinedTwiceAndAMappedNameIsReadAsItIs() throws {
        let out = try export([("users/a", ["name": "Luca Begni", "surname": "Begni", "email": "a@example.com"]),
                              ("users/b", ["name": "Marta", "surname": "Conti", "email": "b@example.com"])])
        #expect(names(try read(out)) == ["a": "Luca Begni", "b": "Marta Conti"])
        #expect(names(try read(out, map: ["name=name"])) == ["a": "Luca Begni", "b": "Marta"])
    }

    /// `nombreContacto` and `imagen` (Spanish), `nomeUtente` and `foto` (Italian),
    /// `Bild` (German): found as the name and the photo.
    @Test(arguments: [("contactos", "nombreContacto", "imagen", "correo"), ("utenti", "nomeUtente", "foto", "email"),
                      ("mitglieder", "vollerName", "Bild", "telefon")])
    func nameAndPhotoFieldsInOtherLanguagesAreFound(collection: String, nameField: String, photoField: String, mark: String) throws {
        let documents: [(path: String, fields: [String: Any])] = (0..<5).map { index in
            ("\(collection)/\(randomID(index))", [nameField: "Ana Pérez \(index)", photoField: "http://127.0.0.1:9/p/\(index).jpg", mark: "x\(index)@example.com"])
        }
        let read = try read(try export(documents + [("ajustes/general", ["nombre": "Mi app", "imagen": "http://127.0.0.1:9/logo.png"])]))
        #expect(read.profiles.count == 5, "\(read.notes)")
        #expect(read.profiles.allSatisfy { $0.displayName.hasPrefix("Ana Pérez") && $0.photoURL?.hasPrefix("http://127.0.0.1:9/p/") == true }, "\(read.notes)")
        #expect(try peopleNote(read).contains("name=\(nameField)") && peopleNote(read).contains("photo=\(photoField)"), "\(read.notes)")
    }

    /// `name: {firstName, middleName, lastName}`: its parts joined; a map holding no name is reported.
    /// A JSON export's records are keyed by `id` unless mapped: the plan's id path is the
    /// one `--map id=id` would give, and reads the record's id.
    @Test func aJSONRecordsIDIsItsIdFieldAsIfMapped() throws {
        #expect(FieldPath(key: "id") == (try FieldPath(parsing: "id")))
        let samples = [DocumentFields([("id", .string("u7")), ("name", .string("Ada"))])]
        let plan = FieldChooser.plan(FieldMap(), samples: samples, documentIDs: ["k1"], idFromRecord: true)
        #expect(plan.id == [try FieldPath(parsing: "id")])
        #expect(plan.id?.first?.value(in: samples[0]).flatMap(PeoplePlan.text) == "u7")
    }

    @Test func aNameHeldAsAMapIsJoined() throws {
        let out = try export([("users/a", ["name": ["firstName": "Ada", "middleName": "King", "lastName": "Lovelace"], "email": "a@example.com"]),
                              ("users/b", ["name": ["first": "Alan", "last": "Turing"], "email": "b@example.com"]),
                              ("users/c", ["name": ["full": "Grace Hopper", "first": "Grace"], "email": "c@example.com"]),
                              ("users/d", ["name": ["read": true], "email": "d@example.com"])])
        let read = try read(out)
        #expect(names(read) == ["a": "Ada King Lovelace", "b": "Alan Turing", "c": "Grace Hopper", "d": ""])
        #expect(read.bad.count == 1 && read.bad[0].reason.contains("document users/d") && read.bad[0].reason.contains("expected text, found a map"), "\(read.bad)")
    }

    /// Given `--map given-name=… --map family-name=…`, the name fields the tool finds by
    /// itself (a stale `name`, a company's `officeName`) no longer name the person: they
    /// are read only where the mapped fields are absent.
    @Test func theOperatorsMapWinsOverWhatTheToolFinds() throws {
        let out = try export([("employees/a", ["name": "old name", "officeName": "Acme Milano", "nome": "Luca", "cognome": "Begni", "email": "a@example.com"]),
                              ("employees/b", ["officeName": "Acme Roma", "nome": "Marta", "cognome": "Conti", "email": "b@example.com"]),
                              ("employees/c", ["name": "Only A Name", "email": "c@example.com"])])
        let read = try read(out, map: ["given-name=nome", "family-name=cognome"])
        #expect(names(read) == ["a": "Luca Begni", "b": "Marta Conti", "c": "Only A Name"], "\(read.notes)")
        #expect(try peopleNote(read).contains("given-name=nome, family-name=cognome, name="), "\(read.notes)")
    }

    // MARK: The collection a person would choose

    /// `users` {firstName, lastName, email} beside a larger `contacts` of vets and
    /// farriers (names, e-mails, phones, a trade): the users, with and without their Auth
    /// accounts, and the note says which evidence decided.
    @Test(arguments: [false, true])
    func theAccountsOwnDocumentsWinOverAnAddressBook(withAuth: Bool) throws {
        var documents: [(path: String, fields: [String: Any])] = []
        var auth: [(id: String, email: String)] = []
        for index in 0..<4 {
            let id = randomID(index)
            documents.append(("users/\(id)", ["firstName": "Owner", "lastName": "Number\(index)", "email": "owner\(index)@example.com"]))
            auth.append(("authUid\(index)", "Owner\(index)@example.com"))
        }
        for index in 0..<12 {
            documents.append(("contacts/\(randomID(100 + index))", ["name": "Dr. Vet \(index)", "email": "vet\(index)@clinic.example", "phone": "+39 055 \(index)",
                                                                   "type": index % 2 == 0 ? "Vet" : "Farrier", "userId": "authUid\(index % 4)"]))
        }
        let read = try read(try export(documents, auth: withAuth ? auth : []))
        let note = try peopleNote(read)
        #expect(note.contains("collection \"users\""), "\(note)")
        #expect(Set(read.profiles.prefix(4).map(\.displayName)) == Set((0..<4).map { "Owner Number\($0)" }), "\(read.profiles)")
        // The accounts are read alone too, by the ids an app signed in with knows them by.
        #expect(read.profiles.dropFirst(4).map(\.id) == (withAuth ? (0..<4).map { "authUid\($0)" } : []), "\(read.profiles)")
        if withAuth {
            #expect(note.contains("4 of 4 are each a Firebase Auth account's own (by e-mail)"), "\(note)")
        } else {
            #expect(note.contains("not \"contacts\": 12 of 12 look like an address book of other people"), "\(note)")
        }
    }

    /// A stable's app as its export is: `users` {firstName, lastName, email, phone} beside
    /// a larger `contacts` (vets and farriers: names, e-mails, phones, an address, no
    /// company field) and `organizationMembers` naming each user by `userId`: the users.
    @Test func recordsAboutUsersAndAnAddressBookAreNotThePeople() throws {
        var documents: [(path: String, fields: [String: Any])] = []
        for index in 0..<5 {
            documents.append(("users/user_\(index)", ["id": "user_\(index)", "email": "u\(index)@stable.example", "firstName": "Rider", "lastName": "Number\(index)",
                                                      "phoneNumber": "+4670123456\(index)", "systemRole": "stable_user"]))
        }
        for index in 0..<8 {
            documents.append(("organizationMembers/user_\(index % 5)_org_\(index)", ["userId": "user_\(index % 5)", "userEmail": "u\(index % 5)@stable.example",
                                                                                      "firstName": "Rider", "lastName": "Number\(index % 5)", "phoneNumber": "+46701", "primaryRole": "rider"]))
        }
        for index in 0..<12 {
            documents.append(("contacts/\(randomID(200 + index))", ["contactType": "Personal", "firstName": "Dr. Sarah", "lastName": "Vet\(index)",
                                                                   "email": "vet\(index)@clinic.example", "phoneNumber": "+4670111", "address": ["street": "Road \(index)"]]))
        }
        let read = try read(try export(documents))
        let note = try peopleNote(read)
        #expect(note.contains("collection \"users\""), "\(note)")
        #expect(note.contains("not \"organizationMembers\": 8 of 8 name a person of \"users\" by a user id field"), "\(note)")
        #expect(note.contains("not \"contacts\": 12 of 12 look like an address book of other people"), "\(note)")
        #expect(read.profiles.map(\.displayName) == (0..<5).map { "Rider Number\($0)" })
    }

    /// `memberships` {name, surname, email} beside a larger `contact_message` (what a
    /// site's form sent: a name, an e-mail, a message, a time): the memberships.
    /// The messages as a site's form writes them, or as its mailer's failure reports
    /// (`subject`, `error_message`, the participant's name and surname: a real export's).
    @Test(arguments: [false, true])
    func messagesAreNotThePeople(failureReports: Bool) throws {
        var documents: [(path: String, fields: [String: Any])] = []
        for index in 0..<3 {
            documents.append(("memberships/\(randomID(index))", ["name": "Luca", "surname": "Begni\(index)", "email": "l\(index)@example.com"]))
        }
        for index in 0..<10 {
            let message: [String: Any] = failureReports
                ? ["subject": "Ticket email failed", "error_message": "404 no entity to update", "name": "Bob", "surname": "Verdi\(index)",
                   "email": "participant\(index)@example.com", "timestamp": ["$timestamp": 1_700_000_000_000_000 + index]]
                : ["name": "Visitor \(index)", "email": "v\(index)@example.com", "message": "Hello, I would like to know more",
                   "createdAt": ["$timestamp": 1_700_000_000_000_000 + index]]
            documents.append(("contact_message/\(randomID(50 + index))", message))
        }
        let read = try read(try export(documents))
        let note = try peopleNote(read)
        #expect(note.contains("collection \"memberships\"") && note.contains("not \"contact_message\": 10 of 10 look like messages"), "\(note)")
        #expect(Set(read.profiles.map(\.displayName)) == Set((0..<3).map { "Luca Begni\($0)" }))
    }

    /// Documents keyed by the Auth accounts' ids, or carrying them in `uid`, win over a
    /// larger collection of people-like documents no account owns.
    @Test(arguments: [false, true])
    func theAccountsIDsDecide(byField: Bool) throws {
        var documents: [(path: String, fields: [String: Any])] = []
        var auth: [(id: String, email: String)] = []
        for index in 0..<3 {
            let uid = "acct\(index)"
            auth.append((uid, "acct\(index)@example.com"))
            documents.append((byField ? "profiles/\(randomID(index))" : "profiles/\(uid)",
                              (byField ? ["uid": uid] : [:] as [String: Any]).merging(["displayName": "Account \(index)"]) { a, _ in a }))
        }
        for index in 0..<9 {
            documents.append(("authors/\(randomID(20 + index))", ["name": "Author \(index)", "email": "author\(index)@press.example", "photoURL": "http://127.0.0.1:9/\(index).jpg"]))
        }
        let read = try read(try export(documents, auth: auth))
        let note = try peopleNote(read)
        #expect(note.contains("collection \"profiles\"") && note.contains("3 of 3 are each a Firebase Auth account's own (by \(byField ? "user id field" : "id"))"), "\(note)")
        #expect(Set(read.profiles.map(\.id)) == ["acct0", "acct1", "acct2"], "\(read.profiles.map(\.id))")
    }

    // MARK: What the emulator imports

    /// A Realtime Database node of a site's texts (`contacto`: a contact page's strings by
    /// language) is not people, even when a map names fields it holds.
    @Test func aSitesTextsAreNotPeople() throws {
        let out = try Fixtures.generateFirestoreExport(["--users", "0", "--no-firestore", "--database", "1", "--photo-base", ""], in: scratch)
        let database = out + "/database_export/demo-project-default-rtdb.json"
        let texts: [String: Any] = ["es": ["nombre": "Nombre", "correo": "Correo", "mensaje": "Mensaje", "enviar": "Enviar"],
                                    "en": ["nombre": "Name", "correo": "E-mail", "mensaje": "Message", "enviar": "Send"]]
        try JSONSerialization.data(withJSONObject: ["contacto": texts]).write(to: URL(fileURLWithPath: database))
        let onlyTexts = try read(out, map: ["name=nombre"])
        #expect(onlyTexts.profiles.isEmpty, "\(onlyTexts.profiles)")
        #expect(onlyTexts.notes.contains { $0.contains("no node of people") }, "\(onlyTexts.notes)")
        let people: [String: Any] = ["u1": ["nombre": "Lucía García", "correo": "l@example.com"], "u2": ["nombre": "Ana Pérez", "correo": "a@example.com"]]
        try JSONSerialization.data(withJSONObject: ["contacto": texts, "usuarios": people]).write(to: URL(fileURLWithPath: database))
        let read = try read(out)
        #expect(names(read) == ["u1": "Lucía García", "u2": "Ana Pérez"], "\(read.notes)")
        #expect(read.notes.contains { $0.contains("people from node \"usuarios\"") }, "\(read.notes)")
    }
}
