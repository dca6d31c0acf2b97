/// The version written into reports and metadata.json's `generator`.
public enum AvatarCacheVersion {
    public static let string = "0.1.0"
}
