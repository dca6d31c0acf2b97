#!/usr/bin/env python3
"""Builds the benchmark corpus: base photos derived from scikit-image's bundled photos
(PyPI wheel, public domain / CC0), then an N-profile export where every profile has its
own photo bytes (per-profile JPEG comment, PNG text chunk, GIF comment, WebP chunk or
HEIF `free` box), so content de-duplication cannot hide the pipeline's cost.

Mix of the photos, as in issue 6: 60 % small JPEGs (96-400 px), 25 % phone JPEGs
(3-12 MP: upscaled with added grain for a realistic entropy-decode cost; some
progressive, some EXIF-rotated, one CMYK), 15 % PNG / WebP / HEIC / GIF.
About one profile in six has no photo.

A second corpus, "b" (`corpus.py WORKDIR N BASE_URL b`), is made the same way from other
photos: scikit-learn's sample photos, the scikit-image photos corpus "a" does not use, and
Debian's gnome-backgrounds wallpapers (downloaded with apt, not installed), with another
mix: 40 % small JPEGs (a third of them progressive), 35 % phone JPEGs (3-12 MP, half
progressive, two of those 4:4:4, one CMYK, two EXIF-rotated), 25 % PNG with alpha,
WebP, HEIC at 1 and 12 MP, GIF; one profile in eight has no photo. Tune on one corpus,
confirm on the other.

A third corpus, "c" (`corpus.py WORKDIR N BASE_URL c`), is account photos as Google,
Gravatar and apps that resize on upload serve them: square JPEGs of 96-200 px (96 px the
most common, as Google's `=s96-c`), 4:2:0, sRGB, baseline with one in four progressive and
one in five carrying a little EXIF, from the photos of both other corpora; one profile in
ten has a larger upload (1-3 MP) instead, one in twenty no photo.

usage: corpus.py WORKDIR N BASE_URL [b|c]
"""
import glob, json, os, struct, subprocess, sys, zipfile

from photo_variants import unique

work, count, base_url = sys.argv[1], int(sys.argv[2]), sys.argv[3].rstrip("/")
corpus = sys.argv[4] if len(sys.argv) > 4 else "a"
suffix = "" if corpus == "a" else f"-{corpus}"
bases = os.path.join(work, "bases" + suffix)
photos = os.path.join(work, "www", "photos" + suffix)
os.makedirs(bases, exist_ok=True)
os.makedirs(photos, exist_ok=True)


def vips(*args):
    subprocess.run(["vips", *args], check=True, stdout=subprocess.DEVNULL)


def source_photos():
    wheel_dir = os.path.join(work, "wheel")
    if not glob.glob(os.path.join(wheel_dir, "scikit_image-*.whl")):
        subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "-d", wheel_dir, "scikit-image==0.26.0"], check=True)
    data = os.path.join(work, "skimage-data")
    if not os.path.isdir(data):
        with zipfile.ZipFile(glob.glob(os.path.join(wheel_dir, "scikit_image-*.whl"))[0]) as wheel:
            for name in wheel.namelist():
                if name.startswith("skimage/data/") and name.rsplit(".", 1)[-1] in ("png", "jpg"):
                    wheel.extract(name, work)
        os.rename(os.path.join(work, "skimage", "data"), data)
    names = ["astronaut.png", "chelsea.png", "coffee.png", "rocket.jpg", "hubble_deep_field.jpg", "retina.jpg",
             "motorcycle_left.png", "ihc.png", "camera.png", "coins.png"]
    return [os.path.join(data, n) for n in names]


def insert_exif(path, tiff):
    """The JPEG at `path` with an EXIF APP1 segment holding `tiff` right after its SOI."""
    data = open(path, "rb").read()
    app1 = b"Exif\x00\x00" + tiff
    open(path, "wb").write(data[:2] + b"\xff\xe1" + struct.pack(">H", len(app1) + 2) + app1 + data[2:])


def exif_orientation_6(path):
    insert_exif(path, b"MM\x00\x2a" + struct.pack(">I", 8) + struct.pack(">H", 1) + struct.pack(">HHIHH", 0x0112, 3, 1, 6, 0) + struct.pack(">I", 0))


marker = os.path.join(bases, ".done")


def made_bases():
    """The base images of a corpus built before (its marker is written last)."""
    return sorted(f for f in os.listdir(bases) if not f.startswith("."))


def build_bases():
    if os.path.exists(marker):
        return made_bases()
    sources = source_photos()
    made = []
    # 24 small JPEGs, 96-400 px.
    sizes = [96, 128, 160, 200, 240, 280, 320, 400]
    for i in range(24):
        src, size = sources[i % len(sources)], sizes[i % len(sizes)]
        out = os.path.join(bases, f"small-{i:02d}.jpg")
        subprocess.run(["vipsthumbnail", src, "--size", f"{size}x{size}", "-o", out + "[Q=85,strip]"], check=True)
        made.append(out)
    # 10 phone JPEGs: 3, 6 and 12 MP, grain added; progressive, rotated, CMYK among them.
    phone = [(2000, 1500, ""), (3000, 2000, ""), (4000, 3000, ""), (3000, 2000, ",interlace"), (4000, 3000, ",interlace"),
             (4000, 3000, "rotate"), (2000, 1500, "rotate"), (3000, 2000, ""), (4000, 3000, "cmyk"), (2000, 1500, ",interlace")]
    for i, (w, h, kind) in enumerate(phone):
        src = sources[(i * 3) % 8]
        up, noisy = os.path.join(work, "up.v"), os.path.join(work, "noisy.v")
        header = subprocess.run(["vipsheader", "-f", "width", src], capture_output=True, text=True, check=True).stdout
        scale = w / int(header)
        vips("resize", src, up, str(scale), "--vscale", str(h / int(subprocess.run(["vipsheader", "-f", "height", src], capture_output=True, text=True, check=True).stdout)))
        vips("gaussnoise", os.path.join(work, "grain.v"), str(w), str(h), "--sigma", "6")
        bands = int(subprocess.run(["vipsheader", "-f", "bands", up], capture_output=True, text=True, check=True).stdout)
        vips("add", up, os.path.join(work, "grain.v"), noisy)
        vips("cast", noisy, os.path.join(work, "noisy8.v"), "uchar")
        noisy = os.path.join(work, "noisy8.v")
        if bands == 1:
            vips("colourspace", noisy, os.path.join(work, "rgb.v"), "srgb")
            noisy = os.path.join(work, "rgb.v")
        out = os.path.join(bases, f"phone-{i:02d}-{w * h // 1_000_000}mp.jpg")
        if kind == "cmyk":
            vips("icc_export", noisy, os.path.join(work, "cmyk.v"), "--output-profile", "cmyk")
            vips("copy", os.path.join(work, "cmyk.v"), out + "[Q=90]")
        elif kind == "rotate":
            vips("rot", noisy, os.path.join(work, "rot.v"), "d270")
            vips("copy", os.path.join(work, "rot.v"), out + "[Q=90,strip]")
            exif_orientation_6(out)
        else:
            vips("copy", noisy, out + f"[Q=90,strip{kind}]")
        made.append(out)
    # 6 others: PNG, WebP, HEIC, GIF, PNG, WebP.
    others = [("png", 800, ""), ("webp", 1200, "[Q=80]"), ("heic", 1200, "[Q=60]"), ("gif", 400, ""), ("png", 600, ""), ("webp", 900, "[Q=80]")]
    for i, (ext, size, options) in enumerate(others):
        src = sources[(i + 2) % len(sources)]
        out = os.path.join(bases, f"other-{i:02d}.{ext}")
        tmp = os.path.join(work, "other.v")
        vips("resize", src, tmp, str(size / int(subprocess.run(["vipsheader", "-f", "width", src], capture_output=True, text=True, check=True).stdout)))
        vips("copy", tmp, out + options)
        made.append(out)
    open(marker, "w").write("ok\n")
    return sorted(os.path.basename(m) for m in made)


def source_photos_b():
    """scikit-learn's two sample photos, the scikit-image photos "a" leaves out, and
    photographic wallpapers of Debian's gnome-backgrounds and desktop-base."""
    source_photos()  # the scikit-image data
    data = os.path.join(work, "skimage-data")
    wheel_dir = os.path.join(work, "wheel-sklearn")
    if not glob.glob(os.path.join(wheel_dir, "scikit_learn-*.whl")):
        subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary", ":all:",
                        "-d", wheel_dir, "scikit-learn==1.7.2"], check=True)
    sklearn = os.path.join(work, "sklearn-images")
    if not os.path.isdir(sklearn):
        os.makedirs(sklearn)
        with zipfile.ZipFile(glob.glob(os.path.join(wheel_dir, "scikit_learn-*.whl"))[0]) as wheel:
            for name in wheel.namelist():
                if name.startswith("sklearn/datasets/images/") and name.endswith(".jpg"):
                    open(os.path.join(sklearn, os.path.basename(name)), "wb").write(wheel.read(name))
    debian = os.path.join(work, "debian-backgrounds")
    if not os.path.isdir(debian):
        os.makedirs(os.path.join(work, "debs"), exist_ok=True)
        subprocess.run(["apt-get", "download", "gnome-backgrounds", "desktop-base"], cwd=os.path.join(work, "debs"), check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        tree = os.path.join(work, "debs", "tree")
        for deb in glob.glob(os.path.join(work, "debs", "*.deb")):
            subprocess.run(["dpkg-deb", "-x", deb, tree], check=True)
        os.makedirs(debian)
        for path in glob.glob(os.path.join(tree, "usr/share/backgrounds/gnome/*-l.webp")) + \
                glob.glob(os.path.join(tree, "usr/share/desktop-base/*-theme/login/sddm-preview.jpg")):
            name = path.split("/")[-3] + "-" + os.path.basename(path) if "desktop-base" in path else os.path.basename(path)
            vips("copy", path, os.path.join(debian, name.rsplit(".", 1)[0] + ".png"))
    photos_b = sorted(glob.glob(os.path.join(sklearn, "*.jpg")))
    photos_b += [os.path.join(data, n) for n in ["motorcycle_right.png", "brick.png", "grass.png", "gravel.png", "moon.png",
                                                 "page.png", "color.png", "clock_motion.png"]]
    photos_b += sorted(glob.glob(os.path.join(debian, "wood-l.png")) + glob.glob(os.path.join(debian, "*sddm-preview.png"))
                       + glob.glob(os.path.join(debian, "adwaita-l.png")))
    return photos_b


def build_bases_b():
    if os.path.exists(marker):
        return made_bases()
    sources = source_photos_b()
    made = []

    def upscaled(src, w, h, sigma):
        """src resized to w x h (aspect not kept, as a phone crop would not) with grain."""
        sw = int(subprocess.run(["vipsheader", "-f", "width", src], capture_output=True, text=True, check=True).stdout)
        sh = int(subprocess.run(["vipsheader", "-f", "height", src], capture_output=True, text=True, check=True).stdout)
        vips("resize", src, os.path.join(work, "b-up.v"), str(w / sw), "--vscale", str(h / sh))
        vips("extract_band", os.path.join(work, "b-up.v"), os.path.join(work, "b-up3.v"), "0", "--n",
             str(min(3, int(subprocess.run(["vipsheader", "-f", "bands", os.path.join(work, "b-up.v")], capture_output=True, text=True, check=True).stdout))))
        up = os.path.join(work, "b-up3.v")
        if int(subprocess.run(["vipsheader", "-f", "bands", up], capture_output=True, text=True, check=True).stdout) < 3:
            vips("colourspace", up, os.path.join(work, "b-rgb.v"), "srgb")
            up = os.path.join(work, "b-rgb.v")
        vips("gaussnoise", os.path.join(work, "b-grain.v"), str(w), str(h), "--sigma", str(sigma))
        vips("add", up, os.path.join(work, "b-grain.v"), os.path.join(work, "b-noisy.v"))
        vips("cast", os.path.join(work, "b-noisy.v"), os.path.join(work, "b-noisy8.v"), "uchar")
        return os.path.join(work, "b-noisy8.v")

    # 15 small JPEGs, 120-480 px, every third progressive.
    sizes = [120, 150, 180, 220, 256, 300, 360, 420, 480]
    for i in range(15):
        src, size = sources[(i * 5) % len(sources)], sizes[i % len(sizes)]
        out = os.path.join(bases, f"small-{i:02d}.jpg")
        subprocess.run(["vipsthumbnail", src, "--size", f"{size}x{size}", "-o", out + "[Q=80,strip" + (",interlace" if i % 3 == 0 else "") + "]"], check=True)
        made.append(out)
    # 12 phone JPEGs, 3-12 MP: six progressive (two at 4:4:4), one CMYK, two rotated.
    phone = [(2000, 1500, ",interlace"), (4000, 3000, ",interlace"), (4000, 3000, ",interlace,subsample_mode=off"),
             (3000, 2000, ""), (4000, 3000, ""), (3000, 2000, ",interlace,subsample_mode=off"), (4000, 3000, "rotate"),
             (2000, 1500, "cmyk"), (4000, 3000, ",interlace"), (3000, 2000, "rotate"), (2000, 1500, ""), (3000, 2000, ",interlace")]
    for i, (w, h, kind) in enumerate(phone):
        noisy = upscaled(sources[(i * 3 + 1) % len(sources)], w, h, 5)
        out = os.path.join(bases, f"phone-{i:02d}-{w * h // 1_000_000}mp.jpg")
        if kind == "cmyk":
            vips("icc_export", noisy, os.path.join(work, "b-cmyk.v"), "--output-profile", "cmyk")
            vips("copy", os.path.join(work, "b-cmyk.v"), out + "[Q=88]")
        elif kind == "rotate":
            vips("rot", noisy, os.path.join(work, "b-rot.v"), "d90")
            vips("copy", os.path.join(work, "b-rot.v"), out + "[Q=88,strip]")
            exif_orientation_6(out)
        else:
            vips("copy", noisy, out + f"[Q=88,strip{kind}]")
        made.append(out)
    # 9 others: PNG with alpha, WebP, HEIC at 1 and 12 MP, GIF.
    others = [("png-alpha", 700), ("webp", 1600), ("heic", 1000), ("heic-12mp", 0), ("gif", 320), ("png-alpha", 1000),
              ("webp", 800), ("heic", 1200), ("png", 500)]
    for i, (kind, size) in enumerate(others):
        src = sources[(i * 7 + 2) % len(sources)]
        ext = kind.split("-")[0]
        out = os.path.join(bases, f"other-{i:02d}.{ext}")
        if kind == "heic-12mp":
            noisy = upscaled(src, 4000, 3000, 3)
            vips("copy", noisy, out + "[Q=55]")
        else:
            tmp = os.path.join(work, "b-other.v")
            vips("resize", src, tmp, str(size / int(subprocess.run(["vipsheader", "-f", "width", src], capture_output=True, text=True, check=True).stdout)))
            if kind == "png-alpha":
                # A disc of the picture on transparency, as profile pictures often are.
                vips("extract_band", tmp, os.path.join(work, "b-rgb3.v"), "0", "--n", "3") if int(subprocess.run(["vipsheader", "-f", "bands", tmp], capture_output=True, text=True, check=True).stdout) >= 3 else vips("colourspace", tmp, os.path.join(work, "b-rgb3.v"), "srgb")
                h = int(subprocess.run(["vipsheader", "-f", "height", tmp], capture_output=True, text=True, check=True).stdout)
                vips("black", os.path.join(work, "b-mask.v"), str(size), str(h))
                subprocess.run(["vips", "draw_circle", os.path.join(work, "b-mask.v"), "255", str(size // 2), str(h // 2), str(min(size, h) // 2), "--fill"], check=True)
                vips("bandjoin", f"{os.path.join(work, 'b-rgb3.v')} {os.path.join(work, 'b-mask.v')}", os.path.join(work, "b-rgba.v"))
                vips("copy", os.path.join(work, "b-rgba.v"), out)
            else:
                vips("copy", tmp, out + {"webp": "[Q=75]", "heic": "[Q=55]", "gif": "", "png": ""}[ext])
        made.append(out)
    open(marker, "w").write("ok\n")
    return sorted(os.path.basename(m) for m in made)


def exif_small(path):
    """A little EXIF, as cameras and phone apps leave it: orientation 1, a make and a model."""
    make, model = b"Google\x00", b"Pixel 7\x00"
    entries, extra = [], b""
    offset = 8 + 2 + 3 * 12 + 4
    for tag, value in ((0x010F, make), (0x0110, model)):
        entries.append(struct.pack(">HHII", tag, 2, len(value), offset + len(extra)))
        extra += value
    entries.append(struct.pack(">HHIHH", 0x0112, 3, 1, 1, 0))
    insert_exif(path, b"MM\x00\x2a" + struct.pack(">I", 8) + struct.pack(">H", 3) + b"".join(entries) + struct.pack(">I", 0) + extra)


def build_bases_c():
    if os.path.exists(marker):
        return made_bases()
    sources = source_photos() + source_photos_b()
    made = []
    sizes = [96, 96, 96, 96, 120, 128, 144, 160, 192, 200]
    for i in range(40):
        src, size = sources[(i * 7) % len(sources)], sizes[i % len(sizes)]
        out = os.path.join(bases, f"account-{i:02d}-{size}.jpg")
        options = "[Q=85,strip,interlace]" if i % 4 == 3 else "[Q=85,strip]"
        subprocess.run(["vipsthumbnail", src, "--size", f"{size}x{size}", "--smartcrop", "centre", "--export-profile", "srgb",
                        "-o", out + options], check=True)
        if i % 5 == 2:
            exif_small(out)
        made.append(out)
    # Uploads kept larger: 1-3 MP, as an app that does not resize on upload serves them.
    for i, (w, h) in enumerate([(1024, 1024), (1280, 960), (1600, 1200), (2048, 1536)]):
        src = sources[(i * 5 + 3) % len(sources)]
        out = os.path.join(bases, f"upload-{i:02d}.jpg")
        tmp = os.path.join(work, "upload.v")
        width = int(subprocess.run(["vipsheader", "-f", "width", src], capture_output=True, text=True, check=True).stdout)
        height = int(subprocess.run(["vipsheader", "-f", "height", src], capture_output=True, text=True, check=True).stdout)
        vips("resize", src, tmp, str(w / width), "--vscale", str(h / height))
        vips("copy", tmp, out + "[Q=90,strip]")
        made.append(out)
    open(marker, "w").write("ok\n")
    return sorted(os.path.basename(m) for m in made)


names = build_bases() if corpus == "a" else build_bases_b() if corpus == "b" else build_bases_c()
originals = {n: open(os.path.join(bases, n), "rb").read() for n in names}
users, with_photo = [], 0
first = ["Ann", "Bo", "Chen", "Dara", "Émile", "Farah", "Gus", "Hana", "Ivo", "Jun", "Kofi", "Lía", "Mina", "Noor"]
last = ["Lee", "Okafor", "Silva", "Nguyen", "Kowalski", "Haddad", "Tanaka", "Müller", "Rossi", "Kim"]
for i in range(count):
    user = {"id": f"user-{i:06d}", "displayName": f"{first[i % 14]} {last[(i // 3) % 10]}", "email": f"user{i}@example.com"}
    has_photo = (i % 6 != 5) if corpus == "a" else (i % 8 != 7) if corpus == "b" else (i % 20 != 18)
    if has_photo:
        if corpus == "c":
            kind = [n for n in names if n.startswith("upload" if i % 10 == 9 else "account")]
            name = kind[(i // 10 if i % 10 == 9 else with_photo) % len(kind)]
        else:
            name = names[with_photo % len(names)]
        ext = name.rsplit(".", 1)[1]
        file = f"p{i:06d}.{ext}"
        path = os.path.join(photos, file)
        if not os.path.exists(path):
            open(path, "wb").write(unique(originals[name], ext, f"avatar-cache bench profile {i}"))
        user["profileImageUrl"] = f"{base_url}/photos{suffix}/{file}"
        with_photo += 1
    users.append(user)
json.dump({"users": users}, open(os.path.join(work, f"users{suffix}-{count}.json"), "w"), ensure_ascii=False)
total = sum(os.path.getsize(os.path.join(photos, f)) for f in os.listdir(photos))
print(f"corpus {corpus}: {count} profiles, {with_photo} with photos, {len(names)} base images, {total / 1e6:.0f} MB served", file=sys.stderr)
