import Foundation
import Testing
@testable import AvatarCacheExports
@testable import AvatarCacheModel
import AvatarCacheTestKit

/// The people found by what the values are and how the documents point at each other,
/// not by what the fields are called (issue 67): a company, an e-mail address or a stale
/// name is not a person's name; the id is the one the rest of the export uses; a map can
/// name the document id (`__name__`).
extension PeopleChooserTests {
    // MARK: Values as evidence for the name

    /// Employees under companies, the company's name in a field named as a name on every
    /// one of them: the people's own names win (a field of theirs, or given + family).
    @Test(arguments: [false, true])
    func aCompanysNameOnEveryDocumentIsNotThePersonsName(givenAndFamily: Bool) throws {
        let companies = ["Initech GmbH", "Umbrella S.A.", "株式会社山田製作所"]
        let people = [("Ana", "García"), ("Bruno", "Costa"), ("Chiara", "Ricci"), ("Dmitri", "Volkov"), ("Emma", "Schulz"), ("Farid", "Haddad")]
        var documents: [(path: String, fields: [String: Any])] = []
        for (index, (given, family)) in people.enumerated() {
            let company = companies[index / 2 % companies.count]
            var fields: [String: Any] = ["displayName": companies[0], "email": "p\(index)@example.com", "empresa": company]
            if givenAndFamily {
                fields["firstName"] = given
                fields["lastName"] = family
            } else {
                fields["nombreCompleto"] = "\(given) \(family)"
            }
            documents.append(("companies/c\(index / 2)/employees/e\(index)", fields))
        }
        documents.append(("companies/c0", ["title": "Initech"]))
        let read = try read(try export(documents))
        #expect(Set(names(read).values) == Set(people.map { "\($0.0) \($0.1)" }), "\(read.notes)")
    }

    /// A `displayName` that holds each user's e-mail address, beside the app's own name
    /// field in Spanish: the name field.
    @Test func anEmailAddressIsNotAName() throws {
        let people = ["Lucía Fernández", "Javier Ortega", "María José Ruiz", "Pablo Serrano"]
        let documents: [(path: String, fields: [String: Any])] = people.enumerated().map { index, name in
            ("usuarios/\(randomID(index))", ["displayName": "user\(index)@example.com", "nombreUsuario": name, "telefono": "+34 600 000 00\(index)"])
        }
        let read = try read(try export(documents))
        #expect(Set(names(read).values) == Set(people), "\(read.notes)")
        #expect(try peopleNote(read).contains("name=nombreUsuario"), "\(read.notes)")
    }

    /// Given and family names on every document, a `name` on one of them holding an older
    /// spelling: the given and family names name everyone, that one too.
    @Test func givenAndFamilyOnEveryDocumentBeatANameOnOne() throws {
        var documents: [(path: String, fields: [String: Any])] = []
        for (index, (given, family)) in [("Zoë", "Brandt"), ("Ilse", "Meyer"), ("Jonas", "Weber"), ("Karl", "Fischer")].enumerated() {
            var fields: [String: Any] = ["firstName": given, "lastName": family, "email": "m\(index)@example.com"]
            if index == 0 { fields["name"] = "Zoe Brand" }
            documents.append(("members/m\(index)", fields))
        }
        let read = try read(try export(documents))
        #expect(names(read) == ["m0": "Zoë Brandt", "m1": "Ilse Meyer", "m2": "Jonas Weber", "m3": "Karl Fischer"], "\(read.notes)")
    }

    /// Two name fields of full names, one of them each account's display name in
    /// Firebase Auth: the one the accounts confirm, and the note says so.
    @Test func anAuthAccountsDisplayNameConfirmsTheName() throws {
        let people = [("Lucía Fernández", "Ventas Norte"), ("Javier Ortega", "Ventas Sur"), ("Pablo Serrano", "Compras Este")]
        var documents: [(path: String, fields: [String: Any])] = []
        for (index, (person, team)) in people.enumerated() {
            documents.append(("usuarios/acct\(index)", ["displayName": team, "nombre": person, "email": "p\(index)@example.com"]))
        }
        let out = try export(documents, auth: (0..<3).map { ("acct\($0)", "p\($0)@example.com") })
        #expect(Set(names(try read(out)).values) == Set(people.map(\.1)), "without names in Auth, the first name field")
        // The accounts with their display names.
        let accounts = out + "/auth_export/accounts.json"
        var json = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: accounts))) as? [String: Any])
        json["users"] = (0..<3).map { ["localId": "acct\($0)", "email": "p\($0)@example.com", "displayName": people[$0].0] }
        try JSONSerialization.data(withJSONObject: json).write(to: URL(fileURLWithPath: accounts))
        let read = try read(out)
        #expect(names(read) == ["acct0": "Lucía Fernández", "acct1": "Javier Ortega", "acct2": "Pablo Serrano"], "\(read.notes)")
        #expect(try peopleNote(read).contains("name=nombre"), "\(read.notes)")
    }

    /// What the values are, judged one by one.
    @Test func valuesAreToldApart() {
        #expect(ValueEvidence.kind("ada@example.com") == .email)
        #expect(ValueEvidence.kind("https://example.com/u/ada") == .url)
        #expect(ValueEvidence.kind("+44 20 7946 0958") == .phone)
        #expect(ValueEvidence.kind("2024-03-01T10:00:00Z") == .date)
        #expect(ValueEvidence.kind("P26HrXpTlZoqNbQbynw3Of8L10NL") == .identifier)
        #expect(ValueEvidence.kind("10452") == .identifier)
        for company in ["Acme Inc.", "Müller GmbH", "Umbrella S.A.", "Widgets Ltd", "Globex LLC", "株式会社山田", "有限会社佐藤", "ООО Ромашка"] {
            #expect(ValueEvidence.kind(company) == .organisation, "\(company)")
        }
        #expect(ValueEvidence.kind("J") == .placeholder)
        for name in ["Ada Lovelace", "José María de la Cruz", "Zoë O'Brien", "山田太郎", "Иван Петров", "محمد علي", "Ζωή Παπαδοπούλου"] {
            #expect(ValueEvidence.kind(name) == .text && ValueEvidence.looksLikePersonName(name), "\(name)")
        }
        #expect(!ValueEvidence.looksLikePersonName("ada_lovelace42"))
        #expect(ValueEvidence.looksLikePhoto("https://firebasestorage.googleapis.com/v0/b/app.appspot.com/o/avatars%2Fu1?alt=media"))
        #expect(ValueEvidence.looksLikePhoto("avatars/u1/photo.jpg") && ValueEvidence.looksLikePhoto("data:image/png;base64,AAAA"))
        #expect(!ValueEvidence.looksLikePhoto("https://twitter.com/ada") && !ValueEvidence.looksLikePhoto("avatar"))
    }

    /// A photo field of web pages beside one of images: the images.
    @Test func aPageIsNotAPhoto() throws {
        let documents: [(path: String, fields: [String: Any])] = (0..<4).map { index in
            ("users/u\(index)", ["displayName": "Person \(["Ana", "Bo", "Cy", "Di"][index]) Example", "profilePicture": "https://social.example/people/u\(index)",
                                 "photoURL": "http://127.0.0.1:9/avatars/u\(index).png"])
        }
        let read = try read(try export(documents))
        #expect(read.profiles.map(\.photoURL) == (0..<4).map { "http://127.0.0.1:9/avatars/u\($0).png" }, "\(read.notes)")
    }

    /// One default image on every document beside each person's own photo: their own;
    /// the default where they have none.
    @Test func oneDefaultImageForEveryoneIsNotTheirPhoto() throws {
        var documents: [(path: String, fields: [String: Any])] = (0..<5).map { index in
            ("users/u\(index)", ["displayName": "Person \(["Ana", "Bo", "Cy", "Di", "Ed"][index]) Example", "avatar": "http://127.0.0.1:9/static/default.png",
                                 "photoURL": "https://platform-lookaside.fbsbx.com/platform/profilepic/?asid=\(index)"])
        }
        documents.append(("users/u5", ["displayName": "Person Flo Example", "avatar": "http://127.0.0.1:9/static/default.png"]))
        let read = try read(try export(documents))
        #expect(read.profiles.map(\.photoURL) == (0..<5).map { "https://platform-lookaside.fbsbx.com/platform/profilepic/?asid=\($0)" } + ["http://127.0.0.1:9/static/default.png"], "\(read.notes)")
    }

    // MARK: References as evidence for the id

    /// An app keying its people by its own numeric id (the document id, repeated in `id`),
    /// which its sessions' attendee lists and a directory use, each document also holding
    /// a `uid` that matches nothing: the document id, and the note says why.
    @Test func theIDTheRestOfTheExportUsesIsTheID() throws {
        var documents: [(path: String, fields: [String: Any])] = []
        let ids = (0..<6).map { String(1040 + $0) }
        for (index, id) in ids.enumerated() {
            documents.append(("users/\(id)", ["id": Int(id)!, "uid": randomID(300 + index) + "abcdefgh", "name": "Person \(["Ana", "Bo", "Cy", "Di", "Ed", "Flo"][index]) Test",
                                              "email": "p\(index)@example.com"]))
        }
        for session in 0..<4 {
            documents.append(("sessions/s\(session)", ["title": "Session \(session)", "attendees": (0..<3).map { Int(ids[(session + $0) % ids.count])! }]))
        }
        documents.append(("directory/all", ["byId": Dictionary(uniqueKeysWithValues: ids.map { ($0, true) })]))
        let read = try read(try export(documents))
        #expect(Set(read.profiles.map(\.id)) == Set(ids), "\(read.notes)")
        let note = try peopleNote(read)
        #expect(note.contains("id=the document id (") && note.contains("\"sessions\" records") && note.contains("uid matches none"), "\(note)")
    }

    /// Other records pointing at people who are not there (ids no document has) change
    /// nothing: the id the names chose stays, and no one is made up.
    @Test func referencesToNoOneChangeNothing() throws {
        var documents: [(path: String, fields: [String: Any])] = (0..<4).map { index in
            ("people/\(randomID(index))", ["uid": "user-\(index)-\(randomID(40 + index))", "displayName": "Name \(["Ana", "Bo", "Cy", "Di"][index]) Test"])
        }
        for index in 0..<6 { documents.append(("visits/v\(index)", ["visitor": "ghost-\(index)", "host": 99_000 + index])) }
        let read = try read(try export(documents))
        #expect(Set(read.profiles.map(\.id)) == Set((0..<4).map { "user-\($0)-\(randomID(40 + $0))" }), "\(read.notes)")
        #expect(read.profiles.count == 4)
    }

    /// `--map id=__name__` names the document id (where the chooser took `uid`), and on a
    /// JSON export, whose records have none, is refused naming it.
    @Test func aMapNamesTheDocumentIDAsFirestoreDoes() throws {
        let documents: [(path: String, fields: [String: Any])] = (0..<4).map { index in
            ("people/\(700 + index)", ["uid": "u\(index)-\(randomID(index))", "displayName": "Name \(["Ana", "Bo", "Cy", "Di"][index]) Test", "email": "p\(index)@example.com"])
        }
        let out = try export(documents)
        #expect(Set(try read(out).profiles.map(\.id)) == Set((0..<4).map { "u\($0)-\(randomID($0))" }))
        #expect(Set(try read(out, map: ["id=__name__"]).profiles.map(\.id)) == ["700", "701", "702", "703"])
        #expect(Set(try read(out, map: ["id=missing|__name__"]).profiles.map(\.id)) == ["700", "701", "702", "703"])

        let json = scratch.appendingPathComponent("people.json")
        try Data(#"{"users": [{"id": "a", "fullName": "Ana Test"}]}"#.utf8).write(to: json)
        #expect {
            try Fixtures.readAll(NexusUsersReader(path: json.path, map: try FieldMap(parsing: ["id=__name__"])))
        } throws: { error in
            "\(error)".contains("__name__ is a Firestore document's id") && "\(error)".contains("--map id=FIELD")
        }
    }

    /// A key holding a dot, in backticks as Firestore writes it.
    @Test func aQuotedNameReachesAKeyWithADot() throws {
        let path = try FieldPath(parsing: "`profile.photo`.url")
        #expect(path.components == [.key("profile.photo"), .key("url")])
        #expect(try FieldPath(parsing: "`a.b`[1]").components == [.key("a.b"), .index(1)])
        #expect(throws: FieldPath.Error.self) { try FieldPath(parsing: "`open") }
        let out = try export([("users/u1", ["profile.photo": ["url": "http://127.0.0.1:9/u1.jpg"], "displayName": "Ana Test", "email": "a@example.com"])])
        #expect(try read(out, map: ["photo=`profile.photo`.url"]).profiles.first?.photoURL == "http://127.0.0.1:9/u1.jpg")
    }
}
