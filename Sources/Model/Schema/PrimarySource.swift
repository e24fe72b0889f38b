/// The source a master's first import reads and whose values stand (DOMAIN.md, "More than one
/// upstream"): ekidata, the files `import` reads without `--source`.
public enum PrimarySource {
    /// Its name, as `import --source`, `sources` and the log give it.
    public static let name = "ekidata"
}
