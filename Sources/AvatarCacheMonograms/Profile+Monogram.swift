import AvatarCacheModel
extension Profile {
    /// A profile as readers make it: the initials by the rules (`Initials`) unless the
    /// reader decided them, the source's colour kept only when it is a valid `#RRGGBB`.
    public init(id: String, displayName: String, initials: String? = nil, glyph: MonogramGlyph? = nil,
                photo: PhotoSource? = nil, colorHex: String? = nil) {
        self.init(id: id, displayName: displayName, decidedInitials: initials ?? Initials.from(displayName: displayName),
                  glyph: glyph, photo: photo, validatedColorHex: AvatarColor.normalized(colorHex))
    }
}
