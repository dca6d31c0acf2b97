/// One parsed vCard.
struct VCard {
    enum Photo { case bytes(String), uri(String) }

    var line: Int
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
