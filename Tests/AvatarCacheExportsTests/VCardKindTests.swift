import Foundation
import Testing
@testable import AvatarCacheExports
@testable import AvatarCacheModel
import AvatarCacheTestKit

/// `KIND` says what a card is (issue 60): a card of `KIND:individual` that carries a
/// `MEMBER` line (as vCard libraries' test cards of every property do) is a person, its
/// initials from its name; a `MEMBER` line without `KIND`, or `KIND:group`, is a group.
@Suite struct VCardKindTests {
    func read(_ cards: String) throws -> [Profile] {
        let directory = try Fixtures.temporaryDirectory("vcard-kind")
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("cards.vcf").path
        try Data(cards.replacingOccurrences(of: "\n", with: "\r\n").utf8).write(to: URL(fileURLWithPath: path))
        let read = try Fixtures.read(JamiReader(path: path))
        #expect(read.bad.isEmpty, "\(read.bad)")
        return read.profiles
    }

    @Test func kindWinsOverMember() throws {
        let profiles = try read("""
            BEGIN:VCARD
            VERSION:4.0
            UID:individual-with-member
            FN:J. Doe
            N:Stevenson;John;Philip,Paul;Dr.;Jr.,M.D.,A.C.P.
            KIND:individual
            MEMBER:urn:uuid:03a0e51f-d1aa-4385-8a53-e29025acd8af
            END:VCARD
            BEGIN:VCARD
            VERSION:4.0
            UID:member-first
            MEMBER:urn:uuid:03a0e51f-d1aa-4385-8a53-e29025acd8af
            FN:Sherlock Holmes
            KIND:Individual
            END:VCARD
            BEGIN:VCARD
            VERSION:4.0
            UID:group
            KIND:group
            FN:The Doe family
            MEMBER:urn:uuid:03a0e51f-d1aa-4385-8a53-e29025acd8af
            END:VCARD
            BEGIN:VCARD
            VERSION:4.0
            UID:member-alone
            FN:Book club
            MEMBER:mailto:a@example.com
            END:VCARD

            """)
        let byID = Dictionary(uniqueKeysWithValues: profiles.map { ($0.id, $0) })
        #expect(byID["individual-with-member"]?.glyph == nil && byID["individual-with-member"]?.initials == "JD", "\(String(describing: byID["individual-with-member"]))")
        #expect(byID["member-first"]?.glyph == nil && byID["member-first"]?.initials == "SH", "KIND after MEMBER still decides")
        #expect(byID["group"]?.glyph == .group && byID["group"]?.displayName == "The Doe family")
        #expect(byID["member-alone"]?.glyph == .group, "a MEMBER line without KIND is a group, as before")
    }
}
