package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

type upload struct {
	key, kind string
	size      int64
	attached  bool
}

type attachment struct {
	Mime   string `json:"mime"`
	Path   string `json:"path"`
	Bucket string `json:"bucket"`
}

type message struct {
	Role        string       `json:"role"`
	Content     string       `json:"content"`
	Attachments []attachment `json:"attachments,omitempty"`
}

type session struct {
	ID       string    `json:"id"`
	User     string    `json:"user"`
	Thread   string    `json:"thread"`
	Messages []message `json:"messages"`
}

// genuploads writes the uploads store: what an agent-runs style runtime
// keeps, files under agent-inputs/{user}/{thread}/uploads/ named as people's
// devices and hands name them, and one session per thread. Everything comes
// from one seeded generator, so the same flags write the same store.
//
// About half the uploads (each with probability 1/2) are attached to a
// message of their thread's session, by their exact key in an
// {"attachments": [{"path": …}]} block; the others were uploaded and never
// sent. Every message also has prose, drawn from phrases whose words the
// names share ("here is the invoice for March", "the photo from the
// holiday", numbers) but never a file name. So the truth is the
// construction: attached uploads are needed; the others are orphans, and
// "name-only" when their file name is that of an attached upload in another
// folder (image.png, of many users), which any rule that goes by names
// keeps.
//
// Files are written sparse: a line saying what they are, then a hole up to
// a size usual for their kind, so that the bytes column weighs a photo as
// more than a text file without writing gigabytes.
func genuploads(args []string) error {
	fl := flag.NewFlagSet("genuploads", flag.ExitOnError)
	storeDir := fl.String("store", "", "store folder to write (created; must not exist)")
	sessDir := fl.String("sessions", "", "session folder to write (created; must not exist)")
	n := fl.Int("n", 2000, "uploads")
	seed := fl.Uint64("seed", 1, "seed of the generator")
	outf := fl.String("out", "", "truth file to write")
	fl.Parse(args)
	if *storeDir == "" || *sessDir == "" || *outf == "" || *n <= 0 {
		return errors.New("genuploads: need -store, -sessions, -out and -n > 0")
	}
	for _, d := range []string{*storeDir, *sessDir} {
		if err := os.Mkdir(d, 0o755); err != nil {
			return err
		}
	}
	r := rand.New(rand.NewPCG(*seed, 0x75706c6f616473))

	// The uploads, in the folders of N/40 users' 6 threads at most.
	users := max(1, *n/40)
	var ups []upload
	byFolder := map[string][]int{}
	taken := map[string]bool{}
	for range *n {
		folder := fmt.Sprintf("agent-inputs/u%d/t%d/uploads/", r.IntN(users), r.IntN(6))
		name, kind := uploadName(r)
		if strings.Contains(name, "%!") {
			return fmt.Errorf("genuploads: a name template is wrong: %q", name)
		}
		key := folder + name
		for i := 1; taken[key]; i++ { // as a browser saves a second "image.png"
			stem, ext := splitExt(name)
			key = fmt.Sprintf("%s%s (%d)%s", folder, stem, i, ext)
		}
		taken[key] = true
		byFolder[folder] = append(byFolder[folder], len(ups))
		ups = append(ups, upload{key: key, kind: kind, size: sizeOf(r, key), attached: r.IntN(2) == 0})
	}
	for _, u := range ups {
		p := filepath.Join(*storeDir, filepath.FromSlash(u.key))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, []byte("upload "+u.key+"\n"), 0o644); err != nil {
			return err
		}
		if err := os.Truncate(p, u.size); err != nil {
			return err
		}
	}

	// One session per thread: each attached upload in a user message, an
	// answer after it, and a few exchanges of prose alone.
	attachedNames := map[string]bool{}
	folders := make([]string, 0, len(byFolder))
	for f := range byFolder {
		folders = append(folders, f)
	}
	slices.Sort(folders)
	for _, f := range folders {
		parts := strings.Split(f, "/") // agent-inputs, u, t, uploads, ""
		s := session{ID: parts[1] + "-" + parts[2], User: parts[1], Thread: parts[2]}
		for _, i := range byFolder[f] {
			if !ups[i].attached {
				continue
			}
			attachedNames[path.Base(ups[i].key)] = true
			s.Messages = append(s.Messages,
				message{Role: "user", Content: prose(r, userPhrases), Attachments: []attachment{{Mime: mimeOf(ups[i].key), Path: ups[i].key, Bucket: "media"}}},
				message{Role: "assistant", Content: prose(r, answerPhrases)})
		}
		for range 1 + r.IntN(3) {
			s.Messages = append(s.Messages,
				message{Role: "user", Content: prose(r, userPhrases)},
				message{Role: "assistant", Content: prose(r, answerPhrases)})
		}
		b, err := json.MarshalIndent(s, "", "  ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(*sessDir, s.ID+".json"), append(b, '\n'), 0o644); err != nil {
			return err
		}
	}

	out := truth{Source: fmt.Sprintf("bench/overkeep genuploads -n %d -seed %d: attached uploads needed, the others never sent", *n, *seed)}
	base := filepath.Base(*storeDir)
	for _, u := range ups {
		b := blob{Key: base + "/" + u.key, Size: u.size, Class: needed}
		switch {
		case u.attached:
		case attachedNames[path.Base(u.key)]:
			b.Class, b.Why = nameOnly, u.kind+"; its file name is attached in another folder"
		default:
			b.Class, b.Why = orphan, u.kind+", never sent"
		}
		out.Blobs = append(out.Blobs, b)
	}
	return writeTruth(*outf, out)
}

// uploadName is the name of one upload and its kind.
func uploadName(r *rand.Rand) (string, string) {
	day := time.Date(2023, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(r.IntN(730*86400)) * time.Second)
	pick := func(l ...string) string { return l[r.IntN(len(l))] }
	switch k := r.IntN(100); {
	case k < 25:
		return fmt.Sprintf(pick("IMG_%04[1]d.JPG", "IMG_%04[1]d.HEIC", "PXL_%[2]s_%[3]s%03[4]d.jpg", "DSC%05[1]d.JPG", "IMG-%[2]s-WA%04[1]d.jpg"),
			r.IntN(10000), day.Format("20060102"), day.Format("150405"), r.IntN(1000)), "camera name"
	case k < 40:
		return pick(day.Format("Screenshot 2006-01-02 at 15.04.05.png"), day.Format("Screenshot_20060102-150405.png"),
			day.Format("Bildschirmfoto 2006-01-02 um 15.04.05.png")), "screenshot"
	case k < 55:
		return pick("image.png", "image.jpg", "image (1).png", "photo.jpg", "scan.pdf", "document.pdf", "file.pdf",
			"untitled.png", "Unbenannt.png", "holiday photo.jpg", "invoice.pdf", "report.docx"), "common name"
	case k < 96:
		n, mon, who := 1+r.IntN(40), day.Format("January"), pick(people...)
		return pick(
			fmt.Sprintf("Scan %d of invoice-%s.pdf", n, day.Format("2006-01")),
			fmt.Sprintf("Q%d report (final).docx", 1+r.IntN(4)),
			fmt.Sprintf("Q%d report %d.xlsx", 1+r.IntN(4), day.Year()),
			fmt.Sprintf("holiday photo %d.jpg", n),
			fmt.Sprintf("invoice %s %d.pdf", strings.ToLower(mon), day.Year()),
			fmt.Sprintf("receipt %s.jpg", day.Format("2006-01-02")),
			fmt.Sprintf("contract v%d (signed).pdf", 1+r.IntN(5)),
			fmt.Sprintf("meeting notes %s.txt", day.Format("2 Jan")),
			fmt.Sprintf(pick("Lebenslauf %[1]s.pdf", "%[1]s's passport.pdf", "CV %[1]s %[2]d.pdf", "%[1]s & Söhne Angebot %[2]d.pdf", "🎂 %[1]s's birthday.jpg"), who, n),
			fmt.Sprintf(pick("Zeugnis %[1]s %[2]d.pdf", "Tom & Jerry %[3]d.png", "party 🎉 %[3]d.gif", "R&D budget %[2]d.xlsx"), mon, day.Year(), n),
			pick(fmt.Sprintf("会议记录 %d.docx", n), day.Format("微信图片_20060102150405.jpg"), fmt.Sprintf("履歴書 %d.pdf", n)),
		), "document"
	default:
		return pick("写真", "照片", "スクリーンショット", "🎉", "發票", "履歴書", "简历", "合同", "견적서", "영수증", "счёт", "фото") +
			pick("", "（２）", "_最終", " コピー") + pick(".jpg", ".png", ".pdf"), "no ASCII word"
	}
}

var people = []string{"Bob", "Anna", "O'Brien", "Zoë", "José", "Jürgen", "Müller", "Priya", "Nguyễn", "Chloé", "Søren", "Li"}

// Phrases of prose: a message is one or two, their blanks filled with a
// number, a month, a year.
var (
	userPhrases = []string{
		"here is the invoice for %[2]s", "the photo from the holiday", "can you read the scan and tell me the total",
		"please summarise the report", "what is in this image?", "this is page %[1]d of the document",
		"compare it with the %[2]s invoice, the amount is %[1]d euros", "I took this photo on %[1]d %[2]s",
		"is the contract signed?", "make the screenshot smaller", "find the receipt from %[2]s %[3]d",
		"check the numbers in the Q%[4]d report", "here's a scan of my passport", "the image is blurry, sorry",
		"my CV, the final version", "the file from %[3]d", "meeting notes, %[1]d items",
	}
	answerPhrases = []string{
		"The invoice is dated %[1]d %[2]s %[3]d and the total is %[1]d.%02[1]d EUR.", "I can see %[1]d people in the photo.",
		"The report covers Q%[4]d %[3]d; revenue grew by %[1]d %%.", "The scan is readable: %[1]d pages.",
		"Here is a summary of the document in %[1]d points.", "The screenshot shows an error at %02[1]d:%02[4]d.",
		"The contract was signed on %[1]d %[2]s.", "The receipt is from %[2]s %[3]d.", "Done: the image is %[1]d0%% smaller.",
	}
)

func prose(r *rand.Rand, phrases []string) string {
	var s []string
	for range 1 + r.IntN(2) {
		p := phrases[r.IntN(len(phrases))]
		n, month, year, q := 1+r.IntN(31), time.Month(1+r.IntN(12)).String(), 2023+r.IntN(2), 1+r.IntN(4)
		if strings.Contains(p, "%") {
			p = fmt.Sprintf(p, n, month, year, q)
		}
		s = append(s, p)
	}
	if len(s) == 2 && !strings.ContainsAny(s[0][len(s[0])-1:], ".?") {
		s[0] += "."
	}
	return strings.Join(s, " ")
}

func splitExt(name string) (string, string) {
	ext := path.Ext(name)
	return strings.TrimSuffix(name, ext), ext
}

// sizeOf draws a size usual for the kind of file: a photo of megabytes, a
// screenshot or scan of hundreds of kilobytes, an office file or a text of
// less.
func sizeOf(r *rand.Rand, key string) int64 {
	lo, hi := int64(20<<10), int64(400<<10)
	switch _, ext := splitExt(key); strings.ToLower(ext) {
	case ".jpg", ".heic", ".gif":
		lo, hi = 800<<10, 6<<20
	case ".png":
		lo, hi = 100<<10, 2<<20
	case ".pdf":
		lo, hi = 60<<10, 3<<20
	case ".txt":
		lo, hi = 1<<10, 20<<10
	}
	return lo + r.Int64N(hi-lo)
}

func mimeOf(key string) string {
	switch _, ext := splitExt(key); strings.ToLower(ext) {
	case ".jpg":
		return "image/jpeg"
	case ".heic":
		return "image/heic"
	case ".png":
		return "image/png"
	case ".gif":
		return "image/gif"
	case ".pdf":
		return "application/pdf"
	case ".txt":
		return "text/plain"
	}
	return "application/octet-stream"
}
