/// How the square is cut from a photo that is not square.
public enum CropMode: String, Sendable, Codable, CaseIterable {
    /// The middle square (the apps draw avatars scaled to fill a circle).
    case centre
    /// libvips' attention crop: the square with the most salient detail.
    case attention
}
