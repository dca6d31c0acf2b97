import Foundation
import Testing
@testable import AvatarCache

/// vCards as other address books write them (Fixtures/vcards, its README says who writes
/// each form): quoted-printable, charsets, iOS line ends, several FN, initials from N.
@Suite struct VCardFormsTests {
    func read(_ name: String) throws -> (profiles: [Profile], bad: [BadRecord]) {
        let path = Fixtures.repositoryRoot.appendingPathComponent("Tests/AvatarCacheTests/Fixtures/vcards/\(name)").path
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
        #expect(undeclared.profiles.first?.displayName == "Ren\u{FFFD}e Dupr\u{FFFD}")
        #expect(undeclared.bad.count == 1 && undeclared.bad.first?.reason.contains("FN: not valid UTF-8 and no CHARSET given") == true, "\(undeclared.bad)")
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
        #expect(initials["fn-only"] == "MP", "the display-name rule without N")
        #expect(result.profiles.first { $0.id == "notes-family-comma" }?.displayName == "Mustermann, Heiko", "the name shown stays FN")
        HostileLedger.record("inputs", "vCards from other address books", tried: "Android and Outlook quoted-printable (soft line breaks), Nokia ISO-8859-1, Outlook Express windows-1252, docomo Shift_JIS, Latin-1 without CHARSET, iOS 6 CR CR LF with a photo, several FN, N with prefix and suffix, \"Family, Given\"", count: 11,
                             outcome: "names decoded as declared (the undeclared one reported, U+FFFD shown), the photo whole, the PREF else first FN, initials from N's given and family names")
    }
}
