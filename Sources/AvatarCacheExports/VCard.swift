/// One parsed vCard.
struct VCard: Equatable {
    enum Photo: Equatable {
        /// `ENCODING=b` (3.0) or `BASE64` (2.1): the value's bytes, blanks included.
        case base64(ArraySlice<UInt8>)
        /// A `data:` URI, unescaped, without blanks.
        case dataURI([UInt8])
        /// Anything else: a link, which a Jami profile does not carry.
        case link(String)
    }

    var line: Int
    /// The place of its `BEGIN:VCARD` among the file's (nested cards counted).
    var ordinal = 1
    /// Another card began inside this one (vCard 2.1 nesting, or a lost `END:VCARD`).
    var hasNestedCard = false
    var uid: String?
    var formattedName: String?
    /// The `FN` chosen was marked preferred.
    var formattedNameIsPreferred = false
    var givenName: String?
    var familyName: String?
    /// N's additional (middle) names, shown between given and family when FN is absent.
    var middleName: String?
    /// The `N` chosen was marked preferred.
    var structuredNameIsPreferred = false
    var nickname: String?
    /// `ORG`'s first component.
    var organization: String?
    /// A company's card: `X-ABShowAs:COMPANY` (Apple) or `KIND:org` (vCard 4).
    var isCompany = false
    /// Names that could not be decoded as declared (reported; the card is still used).
    var textProblems: [String] = []
    var photo: Photo?
    /// `KIND` (or Apple's `X-ADDRESSBOOKSERVER-KIND`), lower case: what the card says it is.
    var kind: String?
    /// A mark of a list: members (`MEMBER`, `X-ADDRESSBOOKSERVER-MEMBER`), Evolution's
    /// `X-EVOLUTION-LIST`, Outlook's and Symbian's `X-DL`, Jami's swarms.
    var hasListMarks = false
    /// A group or distribution list: `KIND:group`, or, where the card has no `KIND`, a
    /// list's marks. `KIND` says what the card is: `KIND:individual` with a `MEMBER` line
    /// (vCard libraries' test cards) is a person.
    var isGroup: Bool { kind.map { $0 == "group" } ?? hasListMarks }
    /// A distribution list's own name (`X-DL:Design Work Group:…`).
    var groupName: String?
    /// The names of the cards nested in this one (a list of its members).
    var memberNames: [String] = []
    /// Set when the card cannot be used (no END:VCARD, too large).
    var problem: String?
    var fallbackID = ""

    /// The name a list of members shows for this card: its FN, else N's given and family.
    var shownName: String? {
        if let name = formattedName?.trimmedWhitespace, !name.isEmpty { return name }
        let parts = [givenName, familyName].compactMap { $0?.trimmedWhitespace }.filter { !$0.isEmpty }
        return parts.isEmpty ? nil : parts.joined(separator: " ")
    }
}
