import Foundation
import Testing
@testable import AvatarCacheExports
@testable import AvatarCacheModel
import AvatarCacheTestKit

/// Exports whose collections and fields are named with invented words, so that only
/// the values and the references can tell where the people are: real names in many
/// scripts, e-mail addresses, companies, a value every document shares, ids, image URLs,
/// and another collection pointing at the people by their document ids. Each seed deals
/// the words to the roles anew, and the companies to the people.
extension PeopleChooserTests {
    static let inventedWords = ["quazzle", "mimbo", "trelk", "snarp", "drimble", "wub", "florbs", "gnarls", "yoink", "blap",
                                "zenk", "frobby", "plonk", "skree", "vunt", "grelb", "thwomp", "kazoo"]
    static let peopleNames = ["Ada Lovelace", "José Álvarez", "Zoë Brandt", "Иван Петров", "Ольга Смирнова", "Νίκος Παππάς",
                              "محمد علي", "فاطمة الزهراء", "דוד כהן", "अमित शर्मा", "山田太郎", "王小明", "김민준", "สมชาย ใจดี",
                              "Chiara Dell'Acqua", "Nguyễn Văn An"]
    static let companies = ["Initech GmbH", "Umbrella S.A.", "Globex LLC", "Acme Ltd", "株式会社ソニー", "ООО Ромашка", "Hooli Inc."]

    /// One invented export: the documents, and what a person reading them finds (the
    /// people's collection, and each person's id, name and photo).
    struct InventedExport {
        var documents: [(path: String, fields: [String: Any])] = []
        var collection = ""
        var people: [String: (name: String, photo: String)] = [:]
    }

    static func inventedExport(seed: Int) -> InventedExport {
        var random = SeededRandom(seed: UInt64(seed) &+ 1_000)
        var words = inventedWords
        for index in words.indices.reversed() { words.swapAt(index, random.below(index + 1)) }
        let (people, pointers) = (words[0], words[1])
        let (name, email, company, shared, photo, code, phone, pointer, text) = (words[2], words[3], words[4], words[5], words[6], words[7], words[8], words[9], words[10])
        var export = InventedExport(collection: people)
        let letters = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
        let count = 8 + random.below(8)
        var ids: [String] = []
        for index in 0..<count {
            let id = String((0..<20).map { _ in letters[random.below(letters.count)] })
            ids.append(id)
            let person = peopleNames[(index + seed) % peopleNames.count]
            let image = "http://127.0.0.1:9/media/\(seed)/\(index).jpg"
            let fields: [(String, Any)] = [(name, person), (email, "person\(index)@mail.example"), (company, companies[random.below(companies.count)]),
                                           (shared, "Zorblax Standard"), (photo, image), (code, "EMP-\(100_000 + index * 7)"),
                                           (phone, "+1 555 01\(10 + index)")]
            export.documents.append(("\(people)/\(id)", Dictionary(uniqueKeysWithValues: fields)))
            export.people[id] = (person, image)
        }
        for index in 0..<(count * 2) {
            export.documents.append(("\(pointers)/\(index)", [pointer: ids[random.below(ids.count)], text: "lorem ipsum dolor sit \(index)"]))
        }
        return export
    }

    /// The same exports, the people keyed by random document ids nothing points at, each
    /// holding the id the rest of the export uses in a field of an invented name (a
    /// 28-character id, as Firebase Auth's): that field is the id.
    @Test(arguments: 0..<3)
    func theIDTheOtherCollectionsUseIsFoundUnderAnyName(seed: Int) throws {
        var invented = Self.inventedExport(seed: seed)
        var random = SeededRandom(seed: UInt64(seed) &+ 7_000)
        let letters = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
        let key = Self.inventedWords[(seed * 5 + 11) % Self.inventedWords.count] + "Ref"
        var keys: [String: String] = [:]
        var people: [String: (name: String, photo: String)] = [:]
        for index in invented.documents.indices where invented.documents[index].path.hasPrefix(invented.collection + "/") {
            let documentID = String(invented.documents[index].path.dropFirst(invented.collection.count + 1))
            let uid = String((0..<28).map { _ in letters[random.below(letters.count)] })
            invented.documents[index].fields[key] = uid
            keys[documentID] = uid
            people[uid] = invented.people[documentID]
        }
        // The other collection points at people by that id, not by the document id.
        for index in invented.documents.indices where !invented.documents[index].path.hasPrefix(invented.collection + "/") {
            for (field, value) in invented.documents[index].fields {
                if let documentID = value as? String, let uid = keys[documentID] { invented.documents[index].fields[field] = uid }
            }
        }
        let read = try read(try export(invented.documents))
        let note = try peopleNote(read)
        #expect(Set(read.profiles.map(\.id)) == Set(people.keys), "\(note)")
        #expect(read.profiles.allSatisfy { people[$0.id]?.name == $0.displayName }, "\(note)")
        #expect(note.contains("id=\(key) (") && note.contains("point at it") && note.contains("the document id matches none"), "\(note)")
    }

    @Test(arguments: 0..<6)
    func onlyTheValuesAndReferencesTellThePeople(seed: Int) throws {
        let invented = Self.inventedExport(seed: seed)
        let read = try read(try export(invented.documents))
        let note = try peopleNote(read)
        #expect(note.contains("people from collection \"\(invented.collection)\""), "\(note)")
        #expect(read.profiles.count == invented.people.count, "\(note)")
        for profile in read.profiles {
            #expect(invented.people[profile.id]?.name == profile.displayName, "\(profile.id): \(profile.displayName); \(note)")
            #expect(invented.people[profile.id]?.photo == profile.photoURL, "\(profile.id): \(profile.photoURL ?? "no photo"); \(note)")
        }
    }
}
