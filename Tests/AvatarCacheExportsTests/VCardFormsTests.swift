import Foundation
import Testing
@testable import AvatarCacheExports
@testable import AvatarCacheImaging
@testable import AvatarCacheModel
@testable import AvatarCacheMonograms
import AvatarCacheTestKit

/// vCards as other address books write them (Fixtures/vcards, its README says who writes
/// each form): quoted-printable, charsets, iOS line ends, several FN, initials from N.
@Suite struct VCardFormsTests {
    func read(_ name: String) throws -> (profiles: [Profile], bad: [BadRecord]) {
        let path = Fixtures.repositoryRoot.appendingPathComponent("Tests/Fixtures/vcards/\(name)").path
        return try Fixtures.read(JamiReader(path: path))
    }

    @Test func quotedPrintableIsDecodedSoftLineBreaksIncluded() throws {
        let android = try read("android-2.1-quoted-printable.vcf")
        #expect(android.bad.isEmpty, "\(android.bad)")
        #expect(android.profiles.map(\.displayName) == ["José Ñúñez"])
        #expect(android.profiles.first?.initials == "JÑ")
        let outlook = try read("outlook-2.1-soft-line-breaks.vcf")
        #expect(outlook.bad.isEmpty, "\(outlook.bad)")
        #expect(outlook.profiles.map(\.displayName) == ["Élodie Françoise de la Tour d'Auvergne et de Bouillon — Direction générale"])
        #expect(outlook.profiles.first?.initials == "ÉD", "given first, then family")
    }

    @Test func theDeclaredCharsetIsDecodedAndUndeclaredNonUTF8IsReported() throws {
        let nokia = try read("nokia-2.1-latin1-quoted-printable.vcf")
        #expect(nokia.profiles.map(\.displayName) == ["François Müller"] && nokia.bad.isEmpty, "\(nokia)")
        let outlookExpress = try read("outlook-express-2.1-windows-1252.vcf")
        #expect(outlookExpress.profiles.map(\.displayName) == ["Zoë Brontë"] && outlookExpress.bad.isEmpty, "\(outlookExpress)")
        #expect(outlookExpress.profiles.first?.initials == "ZB")
        let docomo = try read("docomo-2.1-shift-jis.vcf")
        #expect(docomo.profiles.map(\.displayName) == ["山田 太郎"] && docomo.bad.isEmpty, "\(docomo)")
        let undeclared = try read("no-charset-latin1.vcf")
        #expect(undeclared.profiles.count == 1, "the card is still used")
        // Issue 37, class 5: read as windows-1252 (what such exporters wrote), and reported.
        #expect(undeclared.profiles.first?.displayName == "Renée Dupré")
        #expect(undeclared.bad.count == 1 && undeclared.bad.first?.reason.contains("FN: not valid UTF-8 and no CHARSET given: read as windows-1252") == true, "\(undeclared.bad)")
    }

    @Test func iOSLineEndsKeepTheEmbeddedPhotoWhole() throws {
        let result = try read("ios6-3.0-cr-cr-lf.vcf")
        #expect(result.bad.isEmpty, "\(result.bad)")
        let profile = try #require(result.profiles.first)
        #expect(profile.displayName == "Johnny Appleseed")
        guard case .inline(let photo)? = profile.photo else {
            Issue.record("no inline photo: \(String(describing: profile.photo))")
            return
        }
        #expect(photo.bytes == (try Fixtures.photo("chelsea-96.jpg")), "the photo is the whole JPEG")
    }

    @Test func ofSeveralFNThePreferredElseTheFirstIsTheName() throws {
        let result = try read("several-fn.vcf")
        #expect(result.profiles.map(\.id) == ["urn:uuid:several-fn-pref", "several-fn-first"])
        #expect(result.profiles.map(\.displayName) == ["Robert Smith", "Alice Liddell"])
        #expect(result.profiles.map(\.initials) == ["RS", "AL"])
    }

    @Test func initialsComeFromNWhenItHasGivenAndFamilyNames() throws {
        let result = try read("n-given-family.vcf")
        let initials = Dictionary(uniqueKeysWithValues: result.profiles.map { ($0.id, $0.initials) })
        #expect(initials["outlook-prefix"] == "JD", "not MJ from \"Mr. John …\"")
        #expect(initials["notes-family-comma"] == "HM", "not MH from \"Mustermann, Heiko\"")
        #expect(initials["fn-only"] == "PI", "the display-name rule without N, on the name itself: \"Mr. Pink\" is Pink")
        #expect(result.profiles.first { $0.id == "notes-family-comma" }?.displayName == "Mustermann, Heiko", "the name shown stays FN")
        HostileLedger.record("inputs", "vCards from other address books", tried: "Android and Outlook quoted-printable (soft line breaks), Nokia ISO-8859-1, Outlook Express windows-1252, docomo Shift_JIS, Latin-1 without CHARSET, iOS 6 CR CR LF with a photo, several FN, N with prefix and suffix, \"Family, Given\"", count: 11,
                             outcome: "names decoded as declared (the undeclared one reported, read as windows-1252), the photo whole, the PREF else first FN, initials from N's given and family names")
    }

    /// The inline photo's bytes, or nil.
    func photo(_ profile: Profile?) -> [UInt8]? {
        if case .inline(let photo)? = profile?.photo { return photo.bytes }
        return nil
    }

    @Test func dataURIPhotosInEveryFormAreDecoded() throws {
        let chelsea = try Fixtures.photo("chelsea-96.jpg")
        // Nextcloud: `PHOTO;VALUE=URI:data:image/jpeg;base64\,…` (vCard 3 text escaping).
        let nextcloud = try read("nextcloud-3.0-escaped-data-uri.vcf")
        #expect(nextcloud.bad.isEmpty, "\(nextcloud.bad)")
        #expect(photo(nextcloud.profiles.first) == chelsea, "the whole JPEG, not \"unsupported format\"")
        // `PHOTO;ENCODING=b;TYPE=…:data:image/…;base64,…`: both forms at once.
        let both = try read("base64-parameter-with-data-uri.vcf")
        #expect(both.bad.isEmpty, "\(both.bad)")
        #expect(photo(both.profiles.first) == chelsea, "not \"not valid base64\"")
    }

    @Test func utf16CardsFromMacAddressBookAreRead() throws {
        for (file, name, id) in [("mac-addressbook-utf16be-no-bom.vcf", "Jöhnny Appleseed", "mac-utf16"),
                                 ("mac-addressbook-utf16be-bom.vcf", "Zoë Appleseed", "mac-utf16-bom")] {
            let result = try read(file)
            #expect(result.bad.isEmpty, "\(file): \(result.bad)")
            #expect(result.profiles.map(\.displayName) == [name] && result.profiles.first?.id == id, "\(file): \(result.profiles)")
        }
        // Told as a vCard by its text when the name does not say so.
        let copy = try Fixtures.temporaryDirectory("utf16").appendingPathComponent("contacts.txt")
        defer { try? FileManager.default.removeItem(at: copy.deletingLastPathComponent()) }
        try FileManager.default.copyItem(at: Fixtures.repositoryRoot.appendingPathComponent("Tests/Fixtures/vcards/mac-addressbook-utf16be-no-bom.vcf"), to: copy)
        #expect(try ExportFormat.detect(path: copy.path) == .jami)
    }

    @Test func aBeginLineWithTrailingBlanksStartsACard() throws {
        let result = try read("begin-trailing-space.vcf")
        #expect(result.bad.isEmpty && result.profiles.map(\.displayName) == ["Tess Trailing"], "\(result)")
    }

    @Test func companyCardsShowTheirOrganisationAndNicknameOnlyCardsTheirNickname() throws {
        let result = try read("company-and-nickname.vcf")
        #expect(result.bad.isEmpty, "\(result.bad)")
        let byID = Dictionary(uniqueKeysWithValues: result.profiles.map { ($0.id, $0) })
        #expect(byID["apple-company"]?.displayName == "Acme Corporation", "X-ABShowAs:COMPANY shows ORG")
        #expect(byID["kind-org"]?.displayName == "Globex Corporation", "KIND:org shows ORG")
        for id in ["apple-company", "kind-org"] {
            let profile = try #require(byID[id])
            let initials = profile.initials
            #expect(initials == (id == "apple-company" ? "AC" : "GC"), "\(id): initials from the company, not the person: \(initials)")
        }
        let nickname = try #require(byID["nickname-only"])
        #expect(nickname.displayName == "Skipper" && nickname.glyph == nil, "a nickname is a name: \(nickname)")
    }

    @Test func ofTwoNTheFirstGivesTheInitialsAsTheFirstFNGivesTheName() throws {
        let result = try read("two-n.vcf")
        #expect(result.profiles.first?.displayName == "Robert Smith" && result.profiles.first?.initials == "RS", "\(result.profiles)")
    }

    @Test func initialsFromNFollowTheOrderTheNameIsShownIn() throws {
        let result = try read("cjk-family-first.vcf")
        let byID = Dictionary(uniqueKeysWithValues: result.profiles.map { ($0.id, $0) })
        #expect(byID["cjk-fn"]?.displayName == "黄世勇" && byID["cjk-fn"]?.initials == "黄世", "\(String(describing: byID["cjk-fn"]))")
        #expect(byID["cjk-no-fn"]?.displayName == "山田太郎" && byID["cjk-no-fn"]?.initials == "山太", "\(String(describing: byID["cjk-no-fn"]))")
        #expect(byID["western-family-first-fn"]?.initials == "SJ", "FN \"Smith John\" shows the family name first")
        // Given first where the card shows it so (the rule of the cards before).
        let western = try read("n-given-family.vcf")
        #expect(western.profiles.first { $0.id == "outlook-prefix" }?.initials == "JD")
    }

    @Test func aFolderOfDotVCardFilesIsRead() throws {
        let folder = try Fixtures.temporaryDirectory("vcard-extension")
        defer { try? FileManager.default.removeItem(at: folder) }
        let source = Fixtures.repositoryRoot.appendingPathComponent("Tests/Fixtures/vcards")
        try FileManager.default.copyItem(at: source.appendingPathComponent("two-n.vcf"), to: folder.appendingPathComponent("a.vcard"))
        try FileManager.default.copyItem(at: source.appendingPathComponent("begin-trailing-space.vcf"), to: folder.appendingPathComponent("b.VCARD"))
        try FileManager.default.copyItem(at: source.appendingPathComponent("several-fn.vcf"), to: folder.appendingPathComponent("c.vcf"))
        #expect(try ExportFormat.detect(path: folder.path) == .jami)
        let result = try Fixtures.read(JamiReader(path: folder.path))
        #expect(result.profiles.count == 4, "\(result.profiles.map(\.id))")
        let single = try ExportFormat.detect(path: folder.appendingPathComponent("a.vcard").path)
        #expect(single == .jami)
        HostileLedger.record("inputs", "vCards from other address books: data URIs, UTF-16, company cards", tried: "Nextcloud's escaped data URI, ENCODING=b with a data URI, Mac Address Book UTF-16 with and without a byte-order mark, BEGIN:VCARD with a trailing blank, X-ABShowAs:COMPANY and KIND:org, NICKNAME only, two N, CJK N with and without FN, .vcard files", count: 13,
                             outcome: "photos decoded, cards read, names and initials as the card shows them")
    }

    /// Every fixture's cards, read from the file a few bytes at a time (1 to 7, so that
    /// "\r\r\n", a UTF-16 pair, a byte-order mark and folded lines all fall across two
    /// reads), are the cards read from it in one piece.
    @Test func cardsReadInPiecesAreTheCardsReadWhole() throws {
        let folder = Fixtures.repositoryRoot.appendingPathComponent("Tests/Fixtures/vcards")
        let files = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".vcf") }.sorted()
        #expect(files.count >= 17)
        var random = SeededRandom(seed: 24)
        for file in files {
            let bytes = [UInt8](try Data(contentsOf: folder.appendingPathComponent(file)))
            func cards(_ source: VCardBytes) throws -> [VCard] {
                var cards: [VCard] = []
                try VCardParser(maxCardBytes: 1_000_000).cards(from: source) { cards.append($0) }
                return cards
            }
            let whole = try cards(VCardBytes(bytes: bytes))
            #expect(!whole.isEmpty && whole.allSatisfy { $0.problem == nil }, "\(file)")
            for _ in 0..<8 {
                var offset = 0
                let pieces = try cards(VCardBytes { _ in
                    let count = min(bytes.count - offset, 1 + random.below(7))
                    defer { offset += count }
                    return Array(bytes[offset..<(offset + count)])
                })
                #expect(pieces == whole, "\(file)")
            }
        }
    }

    /// A file is read a card at a time, so its size is not limited, only each card's: a
    /// file of 100 cards, each under the card limit, is read whole however small the
    /// limit; a card over it is reported, and the cards after it are read.
    @Test func aFileOfManyCardsIsReadCardByCardWhateverItsSize() throws {
        let directory = try Fixtures.temporaryDirectory("many-cards")
        defer { try? FileManager.default.removeItem(at: directory) }
        let photo = try Fixtures.photo("chelsea-96.jpg")
        var text = ""
        for index in 1...100 {
            let base64 = photo.count > 0 ? Data(photo + [UInt8(index)]).base64EncodedString() : ""
            let folded = stride(from: 0, to: base64.count, by: 72).map { start -> String in
                let from = base64.index(base64.startIndex, offsetBy: start)
                return String(base64[from..<(base64.index(from, offsetBy: 72, limitedBy: base64.endIndex) ?? base64.endIndex)])
            }.joined(separator: "\r\n ")
            text += "BEGIN:VCARD\r\nVERSION:3.0\r\nUID:card-\(index)\r\nFN:Person \(index)\r\nPHOTO;ENCODING=b;TYPE=JPEG:\(folded)\r\nEND:VCARD\r\n"
            if index == 50 {
                text += "BEGIN:VCARD\r\nFN:Too Large\r\nNOTE:\(String(repeating: "x", count: 3 * photo.count))\r\nEND:VCARD\r\n"
            }
        }
        let file = directory.appendingPathComponent("address-book.vcf")
        try Data(text.utf8).write(to: file)
        var limits = ReaderLimits()
        limits.maxRecordBytes = 2 * photo.count + 1_000
        #expect(text.utf8.count > 16 * limits.maxRecordBytes, "a file over what a whole-file read allowed")
        let result = try Fixtures.read(JamiReader(path: file.path, limits: limits))
        #expect(result.profiles.count == 100, "\(result.profiles.count) profiles; \(result.bad.map(\.reason))")
        #expect(result.bad.map(\.reason) == ["vCard is larger than \(limits.maxRecordBytes) bytes"])
        #expect(result.profiles.map(\.id) == (1...100).map { "card-\($0)" })
        for (index, profile) in result.profiles.enumerated() {
            guard case .inline(let inline)? = profile.photo else {
                Issue.record("\(profile.id): no photo")
                continue
            }
            #expect(inline.bytes == photo + [UInt8(index + 1)], "\(profile.id)")
        }
        // A line with no end in sight is cut where the card limit says, not held whole.
        var lines = PhysicalLines(source: VCardBytes(bytes: [UInt8](repeating: 65, count: 1_000_000) + Array("\r\nEND:VCARD".utf8)),
                                  maxLineBytes: 1_000)
        #expect(try lines.next()?.count == 1_001)
        #expect(try lines.next() == Array("END:VCARD".utf8))
        #expect(try lines.next() == nil)
        HostileLedger.record("inputs", "an address book in one vCard file", tried: "100 cards with photos in one file of over 16 times the card limit, a card over the limit among them; a 1 MB line with no end", count: 2,
                             outcome: "read a card at a time: the 100 cards used with their photos, the one over the limit reported; the line cut at the limit + 1 byte")
    }

    /// Base64 decoded from the text's bytes gives Foundation's bytes for every text it
    /// takes (blanks skipped), and takes every text a base64 encoder writes; it refuses
    /// what Foundation refuses, and a stray "=" Foundation lets by. Over the limit, it says so.
    @Test func base64FromBytesIsFoundationsBase64WithBlanksSkipped() {
        var random = SeededRandom(seed: 64)
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
        var invalid = 0
        for round in 0..<2_000 {
            let original = (0..<random.below(40)).map { _ in random.byte() }
            var text = Array(Data(original).base64EncodedString().utf8)
            // Some mutated: a symbol changed, cut, or padding moved; some only folded.
            switch round % 4 {
            case 1 where !text.isEmpty: text[random.below(text.count)] = alphabet[random.below(64)]
            case 2 where !text.isEmpty: text.removeLast(1 + random.below(min(3, text.count)))
            case 3 where !text.isEmpty: text.insert([UInt8(ascii: "="), UInt8(ascii: "-"), UInt8(ascii: "A")][random.below(3)], at: random.below(text.count))
            default: break
            }
            let expected = Data(base64Encoded: Data(text)).map { [UInt8]($0) }
            var folded: [UInt8] = []
            for byte in text {
                if random.below(10) == 0 { folded += [[13, 10, 32], [32], [9], [10]][random.below(4)] }
                folded.append(byte)
            }
            let decoded = Base64.decode(folded, maxBytes: 1_000)
            let shown = String(decoding: text, as: UTF8.self)
            switch decoded {
            case .bytes(let bytes):
                #expect(bytes == expected, "\(shown): Foundation gives other bytes")
                if round % 4 == 0 { #expect(bytes == original, "\(shown)") }
            case .invalid:
                // Stricter than Foundation, which also takes a stray "=" after a whole group.
                #expect(round % 4 != 0 && (expected == nil || text.contains(UInt8(ascii: "="))), "\(shown)")
            case .tooLarge:
                Issue.record("\(shown): too large")
            }
            invalid += decoded == .invalid ? 1 : 0
        }
        #expect(invalid > 600, "the mutations are mostly refused: \(invalid)")
        #expect(Base64.decode(Array("QUJD\r\n REVG".utf8), maxBytes: 6) == .bytes(Array("ABCDEF".utf8)))
        #expect(Base64.decode(Array("QUJD\r\n REVG".utf8), maxBytes: 5) == .tooLarge)
        #expect(Base64.decode(Array("QUI=".utf8), maxBytes: 2) == .bytes(Array("AB".utf8)))
    }

    // MARK: Issue 37: every address book as its writer wrote it

    /// A card written to a file of its own, read back.
    func readCard(_ text: String) throws -> (profiles: [Profile], bad: [BadRecord]) {
        let directory = try Fixtures.temporaryDirectory("vcard37")
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("card.vcf").path
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        return try Fixtures.read(JamiReader(path: path))
    }

    /// The sample photo's base64, folded as writers fold it.
    func base64Photo(fold: String = "\r\n ") throws -> (text: String, bytes: [UInt8]) {
        let bytes = try Fixtures.photo("chelsea-96.jpg")
        let text = Data(bytes).base64EncodedString()
        var folded = "", line = ""
        for character in text {
            line.append(character)
            if line.count == 72 { folded += line + fold; line = "" }
        }
        return (folded + line, bytes)
    }

    @Test func bareBase64WithNoParameterAndThe21BareBAreInlinePhotos() throws {
        let photo = try base64Photo()
        // Thunderbird's 3.0 card: `PHOTO:` then base64, nothing saying so.
        let thunderbird = try readCard("BEGIN:VCARD\r\nVERSION:3.0\r\nFN:Ada Lovelace\r\nPHOTO:\(photo.text)\r\nEND:VCARD\r\n")
        #expect(thunderbird.bad.isEmpty, "\(thunderbird.bad)")
        #expect(thunderbird.profiles.first?.photo == .inline(InlinePhoto(bytes: photo.bytes)))
        // A phone's 2.1 card: `PHOTO;JPEG;B:`, continuation lines without a leading blank.
        let unfolded = try base64Photo(fold: "\r\n")
        let phone = try readCard("BEGIN:VCARD\r\nVERSION:2.1\r\nN:Lovelace;Ada\r\nPHOTO;JPEG;B:\(unfolded.text)\r\n\r\nEND:VCARD\r\n")
        #expect(phone.bad.isEmpty, "\(phone.bad)")
        #expect(phone.profiles.first?.photo == .inline(InlinePhoto(bytes: photo.bytes)))
        // A word that is not base64 stays a link (and a link is not a photo that can be fetched).
        let word = try readCard("BEGIN:VCARD\r\nVERSION:3.0\r\nFN:Ada\r\nPHOTO:photo.jpg\r\nEND:VCARD\r\n")
        #expect(word.profiles.first?.photo == nil)
        #expect(word.bad.first?.reason.contains("relative path") == true, "\(word.bad)")
    }

    @Test func aPhotoGivenAsAURLIsDownloadedUnderTheNetworkRules() throws {
        let google = try readCard("BEGIN:VCARD\r\nVERSION:3.0\r\nFN:Grace Hopper\r\nPHOTO:https://127.0.0.1:9/a/photo.jpg\r\nEND:VCARD\r\n")
        #expect(google.profiles.first?.photoURL == "https://127.0.0.1:9/a/photo.jpg" && google.bad.isEmpty)
        let uri = try readCard("BEGIN:VCARD\r\nVERSION:4.0\r\nFN:Grace Hopper\r\nPHOTO;VALUE=uri:http://127.0.0.1:9/b.png\r\nEND:VCARD\r\n")
        #expect(uri.profiles.first?.photoURL == "http://127.0.0.1:9/b.png")
        let file = try readCard("BEGIN:VCARD\r\nVERSION:3.0\r\nFN:Grace Hopper\r\nPHOTO;VALUE=uri:file:///etc/passwd\r\nEND:VCARD\r\n")
        #expect(file.profiles.first?.photo == nil && file.bad.first?.reason.contains("file: scheme is not fetched") == true, "\(file.bad)")
        // FullContact's real card (ez-vcard's suite) names its photos by URL.
        let fullContact = try read("ez-vcard/fullcontact.vcf")
        #expect(fullContact.profiles.first?.photoURL?.hasPrefix("https://") == true, "\(fullContact)")
    }

    @Test func initialsFollowTheNameShown() throws {
        // A company shown by its name, a contact person in N: the initials are the company's.
        let company = try readCard("BEGIN:VCARD\r\nVERSION:3.0\r\nFN:Smokeless Joes\r\nN:Sacco;Joseph;;;\r\nEND:VCARD\r\n")
        #expect(company.profiles.first?.initials == "SJ")
        let other = try readCard("BEGIN:VCARD\r\nVERSION:3.0\r\nFN:Vorname Nachname\r\nN:Kneschke;Lars;;;\r\nEND:VCARD\r\n")
        #expect(other.profiles.first?.initials == "VN")
        // FN made of N's names keeps N's order, in any case ("john" in BlackBerry's N).
        let blackBerry = try read("ez-vcard/John_Doe_BLACK_BERRY.vcf")
        #expect(blackBerry.profiles.map(\.initials) == ["JD"])
        let sorting = try readCard("BEGIN:VCARD\r\nVERSION:3.0\r\nFN:Mustermann, Heiko\r\nN:Mustermann;Heiko;;;\r\nEND:VCARD\r\n")
        #expect(sorting.profiles.first?.initials == "HM")
        // Punctuation is no initial.
        #expect(Initials.from(displayName: "BMO - Dupont") == "BD")
        #expect(Initials.fromGraphemes("BMO – Dupont") == "BD")
        #expect(Initials.from(displayName: "- -") == "--", "punctuation alone still shows")
    }

    @Test func ezVCardsRealFilesReadAsAContactsAppShowsThem() throws {
        let folder = try read("ez-vcard")
        let byID = Dictionary(folder.profiles.map { ($0.id, $0) }) { first, _ in first }
        #expect(folder.profiles.count == 26, "\(folder.profiles.map(\.id))")
        for (id, name, initials) in [("John_Doe_BLACK_BERRY", "John Doe", "JD"), ("John_Doe_IPHONE", "Mr. John Richter James Doe Sr.", "JD"),
                                     ("outlook-2007", "Mr. Michael Angstadt Jr.", "MA"), ("gmail-single", "Greg Dartmouth", "GD"),
                                     ("rfc6350-example", "Simon Perreault", "SP"), ("8b574c60-fd7f-4e99-b584-c5db131ae687", "Dummy, Dummy", "DD")] {
            #expect(byID[id]?.displayName == name && byID[id]?.initials == initials, "\(id): \(String(describing: byID[id]))")
        }
        // Whole photos inline (iPhone, Mac Address Book, Outlook, Lotus Notes, Thunderbird), the URL one to fetch.
        let inline = folder.profiles.filter { if case .inline = $0.photo { return true } else { return false } }
        #expect(inline.count == 6, "\(inline.map(\.id))")
        #expect(byID["fullcontact"]?.photoURL != nil)
        // Android's and BlackBerry's photos are cut short in the files: reported.
        #expect(folder.bad.filter { $0.reason.contains("not valid base64") }.map { URL(fileURLWithPath: $0.file).lastPathComponent }.sorted()
                == ["John_Doe_ANDROID.vcf", "John_Doe_BLACK_BERRY.vcf"], "\(folder.bad)")
    }

    @Test func lettersAroundPunctuationAreTheInitials() {
        // A phone's contact list names people with a nickname in brackets, an @, a slash.
        for (name, expected) in [("Anna (Kyiv)", "AK"), ("(alissko)", "AL"), ("=me", "ME"), ("Андрей [ohrana]", "АO"),
                                 ("Kaya /Kyiv/", "KK"), ("albor@", "AL"), ("O'Brien", "OB"), ("J.", "JJ"), ("...", ".."),
                                 ("Zoë (Turku)", "ZT"), ("🙂 (smile)", "🙂S")] {
            #expect(Initials.from(displayName: name) == expected, "\(name)")
        }
    }

    @Test func nestedCardsAreEachAContactTheOuterAfterTheInner() throws {
        // Android's importer (its test card v21_nest.vcf): a 2.1 card may hold cards (AGENT).
        let nested = try read("android-vcard/v21_nest.vcf")
        #expect(nested.profiles.map(\.displayName) == ["nest1", "nest2", "parent"] && nested.bad.isEmpty, "\(nested)")
        #expect(nested.profiles.map(\.id) == ["v21_nest#2", "v21_nest#3", "v21_nest#1"])
        // Nesting is bounded: a file of BEGINs with no END holds at most `maxNesting` open
        // cards; each one pushed out is reported as unfinished, nothing is held for long.
        let deep = String(repeating: "BEGIN:VCARD\nFN:Open\n", count: 1_000) + "BEGIN:VCARD\nFN:Last\nEND:VCARD\n"
        var cards: [VCard] = []
        try VCardParser(maxCardBytes: 1 << 20).cards(from: VCardBytes(bytes: Array(deep.utf8))) { cards.append($0) }
        #expect(cards.count == 1_001 && cards.filter { $0.problem == VCardParser.unfinished }.count == 1_000)
        #expect(cards.first { $0.problem == nil }?.formattedName == "Last")
        // Android writes a nickname as its own property when there is no other name.
        let nickname = try read("android-vcard/v21_im.vcf")
        #expect(nickname.profiles.first?.displayName == "Nick", "\(nickname)")
    }

    @Test func gammusPhoneCardsWithAJPEGThatHasAByteAfterItsEnd() throws {
        // Gammu's test cards (gammu/gammu tests/vcards, GPL-2.0): a phone's read-out whose
        // JPEG has a stray byte after its end-of-image marker.
        let cards = try read("gammu")
        #expect(cards.bad.isEmpty, "\(cards.bad)")
        let byID = Dictionary(cards.profiles.map { ($0.id, $0) }) { first, _ in first }
        guard case .inline(let photo)? = byID["photo-2"]?.photo else { Issue.record("photo-2 carries its photo"); return }
        #expect(byID["photo-2"]?.displayName == "Bar Foobar" && byID["photo-2"]?.initials == "BF")
        #expect(Array(photo.bytes.suffix(3)) == [0xFF, 0xD9, 0x00])
        let avatar = try AvatarRenderer(tiers: [330, 110], maxPixels: 50_000_000).render(photo.bytes, inline: true)
        #expect(avatar.tiers.count == 2)
        #expect(avatar.warning?.contains("premature end of data segment") == true, "\(String(describing: avatar.warning))")
        #expect(byID["photo"]?.photo != nil && byID["gammu#1"]?.displayName == "Nikdo-ME")
    }
}

/// Every real file of the address-book libraries' test corpora (Fixtures/vcards/*/, their
/// README names each writer and where the files come from), read as a contacts app shows
/// them: the table `real-world.tsv` is each card's name, initials and picture, each photo
/// decoded by libvips.
@Suite struct RealWorldVCardTests {
    static let folders = ["android-vcard", "eds", "ez-vcard", "gammu", "kcontacts", "khard", "opensync", "qtpim", "roundcube", "sabre-vobject",
                          "symbian-contacts", "symbian-organizer", "syncevolution", "vcard4android", "vobject"]

    @Test func realWorldCards() throws {
        let root = Fixtures.repositoryRoot.appendingPathComponent("Tests/Fixtures/vcards")
        let renderer = try AvatarRenderer(tiers: [110], maxPixels: 50_000_000)
        var rows: [String] = []
        var files = Set<String>()
        for folder in Self.folders {
            let all = try Fixtures.readAll(JamiReader(path: root.appendingPathComponent(folder).path))
            let read = (profiles: all.profiles, bad: all.bad)
            // What these files state they hold, counted apart from the reader (lines that
            // begin a card, UTF-16's zero bytes set aside), is what the run's count says;
            // each card it did not read is one of the refused rows below.
            var begun = 0
            for file in try FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent(folder).path) {
                let bytes = try Data(contentsOf: root.appendingPathComponent(folder).appendingPathComponent(file)).filter { $0 != 0 }
                let text = String(decoding: bytes, as: UTF8.self).uppercased()
                begun += text.components(separatedBy: CharacterSet(charactersIn: "\r\n")).filter { $0.trimmingCharacters(in: .whitespaces) == "BEGIN:VCARD" }.count
            }
            let count = try #require(all.counts.first)
            #expect(count.stated == begun, "\(folder): the reader counted \(count.stated) cards, the files begin \(begun)")
            #expect(count.read == all.profiles.count, "\(folder)")
            let refused = all.bad.filter { $0.reason.contains("END:VCARD") || $0.reason.hasPrefix("vCard is larger than") }
            #expect(count.stated - count.read == refused.count, "\(folder): every card not read is a refused row")
            for profile in read.profiles {
                var shows = profile.glyph.map { "glyph \($0)" } ?? "monogram"
                switch profile.photo {
                case .url: shows = "url"
                case .inline(let photo):
                    do {
                        let avatar = try renderer.render(photo.bytes, inline: true)
                        shows = avatar.warning == nil ? "photo" : "photo, warning"
                    } catch { shows = "not decoded: \(error)" }
                case nil: break
                }
                let file = URL(fileURLWithPath: profile.origin?.file ?? "?").lastPathComponent
                rows.append("\(folder)/\(file)\t\(profile.id)\t\(profile.displayName)\t\(profile.initials)\t\(shows)")
            }
            for bad in read.bad {
                rows.append("\(folder)/\(URL(fileURLWithPath: bad.file).lastPathComponent)\t#\(bad.index)\t\t\treported: \(bad.reason)")
            }
            for file in try FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent(folder).path) { files.insert("\(folder)/\(file)") }
        }
        // REAL_WORLD_ROWS=<file>: the rows as read, to review against the table when cards are added.
        if let out = ProcessInfo.processInfo.environment["REAL_WORLD_ROWS"] {
            try (rows.sorted().joined(separator: "\n") + "\n").write(toFile: out, atomically: true, encoding: .utf8)
        }
        let table = try String(contentsOf: root.appendingPathComponent("real-world.tsv"), encoding: .utf8)
        let expected = table.split(separator: "\n").filter { !$0.hasPrefix("#") }.map(String.init)
        #expect(rows.sorted() == expected.sorted(), "\(Set(rows).symmetricDifference(expected).sorted().joined(separator: "\n"))")
        // Every file of the folders is in the table: none was skipped unread.
        #expect(Set(expected.map { String($0.prefix { $0 != "\t" }) }) == files)
        #expect(files.count >= 270 && Set(files.map { $0.prefix { $0 != "/" } }).count == Self.folders.count)
    }
}
