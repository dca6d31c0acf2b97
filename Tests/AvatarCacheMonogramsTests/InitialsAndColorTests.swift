import Foundation
import Testing
@testable import AvatarCacheModel
@testable import AvatarCacheMonograms

@Suite struct InitialsTests {
    @Test(arguments: [
        // The apps' design examples.
        ("John Doe", "JD"), ("Alice", "AL"), ("Bob Smith Jr.", "BS"), ("J", "JJ"), ("", "??"), ("Bob", "BO"),
        // White space: leading, trailing, repeated, tabs, no-break space, blank.
        ("  Maria   da  Silva  ", "MD"), ("\tann\nlee ", "AL"), ("Zoë\u{00A0}Ångström", "ZÅ"), ("   ", "??"),
        // Accents, precomposed and combining.
        ("émile zola", "ÉZ"), ("e\u{0301}mile zola", "E\u{0301}Z"),
        // CJK, Hangul, Devanagari, Arabic, Greek, Cyrillic.
        ("李小龍", "李小"), ("山田 太郎", "山太"), ("김민준", "김민"), ("अर्जुन शर्मा", "अश"),
        ("محمد الأحمد", "ما"), ("ναταλία παπαδοπούλου", "ΝΠ"), ("иван петров", "ИП"),
        // Emoji: ZWJ sequences and flags stay whole.
        ("👩‍👩‍👧‍👦 Family", "👩‍👩‍👧‍👦F"), ("🇯🇵 Tokyo", "🇯🇵T"), ("🙂", "🙂🙂"),
        // An uppercase form longer than one grapheme is kept as it was.
        ("ßtraße", "ßT"),
    ])
    func displayNameRules(name: String, expected: String) {
        #expect(Initials.from(displayName: name) == expected)
    }

    /// Initials of the name, not of its decorations (BRIEF: "a leading title or trailing
    /// degree is not a word of it, and 'Family, Given' reads as Given Family"); the words
    /// that are also names are kept where they are names.
    @Test(arguments: [
        // Seen in real address books (issue 50).
        ("Mr. A N. Example, B.Math, M.Sc", "AN"), ("Doe, John", "JD"),
        // Titles in the tests' languages.
        ("Dr. Ada Lovelace", "AL"), ("Prof. Dr. Heiko Mustermann", "HM"), ("Mrs Jane Smith", "JS"), ("Mme Amélie Poulain", "AP"),
        ("Herr Max Müller", "MM"), ("Sr. José García", "JG"), ("Dott.ssa Maria Rossi", "MR"), ("Ing. Jan Novák", "JN"),
        ("Shri Arjun Sharma", "AS"), ("Dr. Who", "WH"), ("Dr.", "DR"), ("Mr", "MR"),
        // Suffixes and degrees.
        ("Bob Smith Jr.", "BS"), ("Smith Jr.", "SM"), ("John Smith, PhD", "JS"), ("Jane Roe MD", "JR"), ("Martin Luther King III", "ML"),
        ("Smith, Jr.", "SM"), ("Doe, John, Jr.", "JD"), ("Ada Lovelace, M.A.", "AL"),
        // Words that are titles or degrees elsewhere, names here.
        ("Jack Ma", "JM"), ("JACK MA", "JM"), ("Don Draper", "DD"), ("Ing Chen", "IC"), ("M. Night Shyamalan", "MN"), ("Ma", "MA"),
        // More than one comma with names on both sides: not "Family, Given".
        ("Smith, John, Mary", "SJ"), ("Amartya Sen", "AS"), ("Li Jun", "LJ"), ("Hon Lee", "HL"),
        // Each part of "Family, Given" without its own decorations.
        ("Dr. Smith, John", "JS"), ("Smith, John Jr.", "JS"),
        // A company's suffix is not a name either.
        ("Acme, Inc.", "AC"), ("Müller Bau GmbH", "MB"), ("Widgets Ltd.", "WI"),
    ])
    func theNameItselfNotItsDecorations(name: String, expected: String) {
        #expect(Initials.from(displayName: name) == expected, "\(name) → \(Initials.nameItself(name))")
    }

    @Test func theSimpleScalarShortcutFollowsTheSameRules() {
        // Every name the shortcut takes gives what the grapheme rules give: ASCII, Latin,
        // Greek and Cyrillic letters, punctuation and symbols among them, every blank.
        let alphabet = Array("aZ9.- \t\r\n\u{0B}\u{0C}\u{1C}\u{1F}_'éÉßŉǆǅΐΩωжЖ«»¿\u{00A0}\u{0085}\u{00AD}\u{02BC}\u{0482}")
        var generator = SystemRandomNumberGenerator()
        for length in 0..<12 {
            for _ in 0..<300 {
                let name = String((0..<length).map { _ in alphabet.randomElement(using: &generator)! })
                #expect(Initials.fromSimpleScalars(name) == Initials.fromGraphemes(name), "\(name.debugDescription)")
            }
        }
        #expect(Initials.fromSimpleScalars("Zoë Lee") == "ZL")
        #expect(Initials.fromSimpleScalars("e\u{0301}mile zola") == nil, "a combining mark: the grapheme rules decide")
        #expect(Initials.fromSimpleScalars("李小龍") == nil, "past the table: the grapheme rules decide")
        // A combining mark right after the second word's first letter belongs to it.
        for name in ["Ann L\u{0301}ee", "Ann Lee Zoë", "A\u{0301}nn Lee", "Ann Lee\u{00A0}Kim", "Ann Lee 李", "Ann L\u{0483}ee"] {
            #expect(Initials.from(displayName: name) == Initials.fromGraphemes(name), "\(name.debugDescription)")
        }
    }

    /// What the shortcut rests on: each scalar of its table is a grapheme of its own beside
    /// a letter, beside itself (Hangul jamo and regional indicators join their own kind)
    /// and beside a combining mark's absence (it neither extends what is before it nor
    /// prepends to what follows).
    @Test func theSimpleScalarsAreGraphemesOfTheirOwn() {
        var simple = 0
        for value in 0..<SimpleScalars.end where SimpleScalars.isSimple(value) {
            guard let scalar = Unicode.Scalar(value) else { continue }
            simple += 1
            let alone = String(scalar)
            #expect(SimpleScalars.traits(scalar).contains(.simple))
            #expect(("a" + alone).count == 2 && (alone + "a").count == 2, "U+\(String(value, radix: 16))")
            if value != 0x0D && value != 0x0A { #expect((alone + alone).count == 2, "U+\(String(value, radix: 16))") }
        }
        #expect(simple == 0x300 + (0x483 - 0x370) + (0x530 - 0x48A))
        #expect(!SimpleScalars.traits("\u{0301}").contains(.simple) && !SimpleScalars.traits("\u{0488}").contains(.simple))
        #expect(!SimpleScalars.traits("\u{0530}").contains(.simple) && !SimpleScalars.traits("김").contains(.simple))
    }

    /// The grapheme rules as they were written first, whole words split and filtered: the
    /// one-pass `fromGraphemes` must answer as they do.
    static func fromGraphemesByWords(_ displayName: String) -> String {
        let words = displayName.split(whereSeparator: { $0.isWhitespace || $0.isNewline })
        let lettered = words.map { $0.filter { !Initials.isIgnorable($0) } }.filter { !$0.isEmpty }
        let letters: [[Character]] = lettered.isEmpty ? words.map(Array.init) : lettered.map(Array.init)
        guard let first = letters.first else { return Initials.unknown }
        if letters.count >= 2 { return Initials.upper(first[0]) + Initials.upper(letters[1][0]) }
        if first.count >= 2 { return Initials.upper(first[0]) + Initials.upper(first[1]) }
        return Initials.upper(first[0]) + Initials.upper(first[0])
    }

    @Test func theOnePassGraphemeRulesAnswerAsTheWordsDo() {
        let pieces = ["a", "Z", "é", "e\u{0301}", "ß", "김", "👩‍💻", "🇺🇦", "(", ")", "-", "$", "=", "^", ".", "’", "ǆ", "\u{00A0}", " ", "\t",
                      "\r\n", "\u{2028}", "\u{3000}", "Ω", "ﬁ", "ŉ"]
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<20_000 {
            let name = (0..<Int.random(in: 0...7, using: &generator)).map { _ in pieces.randomElement(using: &generator)! }.joined()
            #expect(Initials.fromGraphemes(name) == Self.fromGraphemesByWords(name), "\(name.debugDescription)")
        }
        for word in ["Ph.D.", "MR", "Mr", "m.sc", "Dña", "ǅ", ""] {
            #expect(Initials.plain(word) == word.lowercased().filter { $0 != "." }, "\(word)")
        }
    }

    @Test func theDecorationShortcutFollowsTheSameRules() {
        // Every name of simple scalars the scalar-wise look at titles and suffixes takes is judged as the
        // grapheme-wise one judges it: words of titles, suffixes, capitals, dots, commas
        // and every ASCII blank, CR LF among them.
        let words = ["Dr.", "dr", "Mr", "PROF", "Sr.", "Sr", "Ing.", "Ing", "Jr.", "jr", "III", "iii", "MA", "Ma", "M.A.", "PhD,",
                     "Esq;", ",MD", "Sen", "SEN", "Hon.", "professor", "Professorship", "Ann", "LEE", "lee", "B.Math", "x", "",
                     "Dña.", "DÑA.", "Müller", "MÜLLER", "Straße", "STRASSE", "Иван", "ИВАН", "Ωμέγα", "ŉ"]
        let blanks = [" ", "  ", "\t", "\r\n", "\n", "\u{0B}", "\u{0C}", "\r", "\u{00A0}", "\u{0085}"]
        var generator = SystemRandomNumberGenerator()
        var taken = 0
        for _ in 0..<20_000 {
            let count = Int.random(in: 1...4, using: &generator)
            var name = ""
            for index in 0..<count {
                if index > 0 || Bool.random(using: &generator) && Bool.random(using: &generator) { name += blanks.randomElement(using: &generator)! }
                name += words.randomElement(using: &generator)!
            }
            if Int.random(in: 0..<8, using: &generator) == 0 { name += blanks.randomElement(using: &generator)! }
            guard let shortcut = Initials.hasDecorationBySimpleScalars(name) else { continue }
            taken += 1
            #expect(shortcut == Initials.hasDecorationByGraphemes(name), "\(name.debugDescription)")
        }
        #expect(taken > 10_000, "the shortcut took \(taken) names")
        #expect(Initials.hasDecorationBySimpleScalars("Dr. Zoë") == true)
        #expect(Initials.hasDecorationBySimpleScalars("Dr. Zoe\u{0308}") == nil, "a combining mark: the grapheme rules decide")
        #expect(Initials.hasDecorationBySimpleScalars(" Dr. Who") == nil && Initials.hasDecorationBySimpleScalars("Dr. Who ") == nil, "blanks around: split")
        // The quick look at a word misses no word of the lists, however written.
        for key in Initials.titles.union(Initials.titlesWithDot).union(Initials.suffixes).union(Initials.suffixesInCapitals) {
            for word in [key, key.uppercased() + ".", key + ",", String(key.prefix(1)) + "." + key.dropFirst()] {
                #expect(Initials.mayBeDecoration(Substring(word).unicodeScalars) != false, "\(word)")
            }
        }
        #expect(Initials.mayBeDecoration(Substring("Ann").unicodeScalars) == false && Initials.mayBeDecoration(Substring("Zoë").unicodeScalars) == nil)
        #expect(Initials.hasComma("Doe, John") && !Initials.hasComma("Doe John") && !Initials.hasComma("Zoë Lee"))
    }

    @Test func uppercasingDoesNotDependOnTheLocale() {
        // Turkish rules would give "İ"; Unicode's default mapping gives "I".
        #expect(Initials.from(displayName: "ilker irmak") == "II")
    }

    @Test func monicaUsesFirstAndLastName() {
        #expect(Initials.from(firstName: "Regis", lastName: "Freyd") == "RF")
        #expect(Initials.from(firstName: "Madonna", lastName: nil) == "MA")
        #expect(Initials.from(firstName: "  ", lastName: "Ng") == "NG")
        #expect(Initials.from(firstName: nil, lastName: "") == "??")
    }
}

@Suite struct AvatarColorTests {
    @Test func sourceColourIsValidated() {
        #expect(AvatarColor.normalized("#b3d5fe") == "#B3D5FE")
        #expect(AvatarColor.normalized("b3d5fe") == "#B3D5FE")
        #expect(AvatarColor.normalized("#b3d5f") == nil)
        #expect(AvatarColor.normalized("red") == nil)
        #expect(Profile(id: "1", displayName: "A", colorHex: "#zzzzzz").colorHex == nil)
    }

    @Test func paletteColourIsStableAndFromThePalette() {
        // Fixed expectations: the same on every machine and in every process.
        #expect(AvatarColor.paletteColor(forUserID: "u1000") == AvatarColor.paletteColor(forUserID: "u1000"))
        let spread = Set((0..<200).map { AvatarColor.paletteColor(forUserID: "user-\($0)") })
        #expect(spread == Set(AvatarColor.palette), "200 ids should use all 8 colours")
    }

    @Test func textColourReachesAAOnEveryPaletteColour() {
        for color in AvatarColor.palette {
            let text = AvatarColor.textColor(on: color)
            #expect(AvatarColor.contrast(text, color) >= 4.5, "\(text) on \(color)")
        }
        // White falls short on several of the palette's colours.
        let whiteFails = AvatarColor.palette.filter { AvatarColor.contrast(AvatarColor.white, $0) < 4.5 }
        #expect(whiteFails.count >= 4)
    }
}
