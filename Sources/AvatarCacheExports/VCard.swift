import AvatarCacheLookup
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
    var isGroup = false
    /// Set when the card cannot be used (no END:VCARD, too large).
    var problem: String?
    var fallbackID = ""
}
