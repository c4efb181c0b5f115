"""Non-PHI clinical context: vitals, labs, times, drugs, diagnoses, devices, eponyms.

Everything here is deliberately full of capitalised words and numbers that are NOT
PHI (Foley, Swan-Ganz, "K 4.2", "BP 118/64", "pain 4/10", "0400"), so that a model
trained on the synthetic notes cannot learn that capitals or digits mean PHI.
"""
from __future__ import annotations

import random

MEDS = (
    "Lasix", "furosemide", "Lopressor", "metoprolol", "Coumadin", "warfarin", "heparin",
    "Lovenox", "Plavix", "aspirin", "ASA", "atorvastatin", "Lipitor", "lisinopril",
    "captopril", "amlodipine", "Cardizem", "diltiazem", "amiodarone", "digoxin", "insulin",
    "Lantus", "glargine", "Humalog", "metformin", "Protonix", "pantoprazole", "famotidine",
    "Zofran", "ondansetron", "Reglan", "Colace", "senna", "Dulcolax", "lactulose",
    "Tylenol", "acetaminophen", "morphine", "Dilaudid", "hydromorphone", "oxycodone",
    "Percocet", "fentanyl", "Ativan", "lorazepam", "Haldol", "Seroquel", "Zyprexa",
    "Precedex", "propofol", "Versed", "Keppra", "Dilantin", "phenytoin", "vancomycin",
    "Vanco", "Zosyn", "cefepime", "ceftriaxone", "Flagyl", "levofloxacin", "Bactrim",
    "fluconazole", "acyclovir", "prednisone", "Solu-Medrol", "hydrocortisone", "albuterol",
    "Atrovent", "Combivent", "Spiriva", "Advair", "nitroglycerin", "Levophed",
    "norepinephrine", "Neo-Synephrine", "vasopressin", "dopamine", "dobutamine",
    "potassium chloride", "KCl", "magnesium sulfate", "calcium gluconate", "sodium bicarb",
    "Ambien", "trazodone", "sertraline", "Zoloft", "Celexa", "gabapentin", "Neurontin",
    "levothyroxine", "Synthroid", "allopurinol", "tamsulosin", "Flomax", "Eliquis",
    "Xarelto", "Narcan", "thiamine", "folate", "multivitamin", "Ensure",
)

PO_MEDS = ("metoprolol", "lisinopril", "atorvastatin", "aspirin", "Plavix", "Lasix", "metformin",
           "levothyroxine", "Synthroid", "sertraline", "amlodipine", "Coumadin", "tamsulosin",
           "gabapentin", "Eliquis", "omeprazole", "Colace", "senna", "allopurinol", "prednisone",
           "Keppra", "Seroquel", "trazodone", "oxycodone", "Tylenol", "digoxin", "amiodarone")

ABX = ("vanco", "vancomycin", "zosyn", "cefepime", "ceftriaxone", "flagyl", "levofloxacin",
       "meropenem", "cipro", "unasyn", "bactrim", "linezolid", "daptomycin", "azithromycin",
       "ampicillin", "gentamicin", "clindamycin", "doxycycline", "micafungin", "fluconazole")

DRIPS = (("Levophed", "mcg/kg/min", (0.02, 0.3)), ("neo", "mcg/kg/min", (0.5, 3.0)),
         ("propofol", "mcg/kg/min", (10, 60)), ("fentanyl", "mcg/hr", (25, 200)),
         ("heparin", "units/hr", (600, 1800)), ("insulin", "units/hr", (1, 12)),
         ("Precedex", "mcg/kg/hr", (0.2, 1.2)), ("nitro", "mcg/min", (10, 150)),
         ("amio", "mg/min", (0.5, 1.0)), ("dopamine", "mcg/kg/min", (2, 10)),
         ("Versed", "mg/hr", (1, 6)), ("vasopressin", "units/min", (0.03, 0.04)),
         ("esmolol", "mcg/kg/min", (50, 200)), ("Cardizem", "mg/hr", (5, 15)))

DIAGNOSES = (
    "CHF", "congestive heart failure", "COPD", "CAD", "coronary artery disease", "HTN",
    "hypertension", "DM2", "type 2 diabetes", "IDDM", "atrial fibrillation", "afib", "PAF",
    "ESRD on HD", "CKD stage 3", "cirrhosis", "alcohol abuse", "ETOH abuse", "GIB",
    "upper GI bleed", "pneumonia", "aspiration pneumonia", "urosepsis", "sepsis",
    "DVT", "PE", "pulmonary embolism", "CVA", "stroke", "TIA", "seizure disorder",
    "Parkinson's disease", "Alzheimer's dementia", "dementia", "depression", "anxiety",
    "schizophrenia", "bipolar disorder", "hypothyroidism", "Graves' disease",
    "Hashimoto's thyroiditis", "Crohn's disease", "ulcerative colitis", "Barrett's esophagus",
    "GERD", "pancreatitis", "cholecystitis", "diverticulitis", "SBO", "C. diff colitis",
    "MRSA bacteremia", "VRE", "UTI", "AAA", "PVD", "osteoporosis", "OA", "RA",
    "lupus", "gout", "BPH", "prostate CA", "breast CA", "lung CA", "NSCLC",
    "Hodgkin's lymphoma", "non-Hodgkin lymphoma", "AML", "CLL", "multiple myeloma",
    "Guillain-Barre syndrome", "myasthenia gravis", "MS", "Cushing's syndrome",
    "Addison's disease", "Bell's palsy", "hepatitis C", "HIV", "sleep apnea", "OSA",
    "morbid obesity", "anemia", "thrombocytopenia", "hyperkalemia", "hyponatremia",
    "DKA", "AKI", "acute renal failure", "respiratory failure", "ARDS", "SAH", "SDH",
    "hip fracture", "aortic stenosis", "mitral regurgitation", "cardiomyopathy",
    "Wernicke's encephalopathy", "Korsakoff syndrome", "hepatic encephalopathy",
)

PROCEDURES = (
    "CABG x3", "CABG x4", "AVR", "MVR", "PCI to the LAD", "cardiac cath", "TURP",
    "lap chole", "Whipple procedure", "Nissen fundoplication", "Roux-en-Y gastric bypass",
    "Hartmann's procedure", "ex-lap", "right hemicolectomy", "sigmoid colectomy",
    "L TKR", "R THR", "ORIF of the L hip", "L4-L5 laminectomy", "C5-C6 fusion",
    "AAA repair", "fem-pop bypass", "CEA", "pacemaker placement", "AICD placement",
    "EGD", "colonoscopy", "ERCP", "bronchoscopy", "thoracentesis", "paracentesis",
    "trach/PEG", "craniotomy", "VP shunt", "mastectomy", "lumpectomy", "appendectomy",
    "Billroth II", "cholecystectomy", "nephrectomy", "TIPS", "cardioversion", "ablation",
)

DEVICES = (
    "Foley", "Swan-Ganz", "Swan", "A-line", "art line", "R IJ TLC", "L subclavian TLC",
    "PICC", "R PICC", "L radial A-line", "Cordis", "Hickman", "Port-a-Cath", "Quinton",
    "NGT", "OGT", "Dobhoff", "Salem sump", "PEG", "J-tube", "JP drain", "Jackson-Pratt",
    "Hemovac", "Penrose drain", "chest tube", "Pleur-evac", "ETT", "trach", "Shiley",
    "rectal tube", "Flexiseal", "IABP", "Impella", "pacing wires", "EVD", "ventriculostomy",
    "Bair Hugger", "Venodyne boots", "pneumoboots", "TEDs", "Miami J collar", "Aspen collar",
    "Yankauer", "Ambu bag", "BiPAP", "CPAP", "nasal cannula", "NC", "face tent",
    "non-rebreather", "high flow", "Mepilex", "Tegaderm", "Xeroform", "Duoderm", "Kerlix",
)

SCALES = ("Glasgow Coma Scale", "GCS", "RASS", "CAM-ICU", "Braden", "Morse fall scale",
          "CIWA", "NIHSS", "Ranson criteria", "Child-Pugh", "MELD", "Wells score", "APGAR")

SIGNS = ("Babinski", "Homan's sign", "Murphy's sign", "Kernig's sign", "Brudzinski",
         "Chvostek's sign", "Trousseau's sign", "Cullen's sign", "Grey Turner's sign",
         "Kussmaul respirations", "Cheyne-Stokes respirations", "Romberg", "Tinel's sign",
         "Phalen's test", "Allen test", "Valsalva", "McBurney's point", "Rovsing's sign")

FEEDS = ("Jevity", "Nepro", "Pulmocare", "Impact", "Osmolite", "Promote", "Glucerna", "Vital")

SERVICES = ("MICU", "SICU", "CCU", "CSRU", "CVICU", "neuro ICU", "Trauma ICU", "step-down",
            "the floor", "medicine", "cardiology", "the ED", "the cath lab", "IR", "the OR",
            "PACU", "rehab", "hospice", "oncology", "renal", "GI", "ortho", "neurosurgery",
            "psych", "ID", "pulm", "PT/OT", "case management", "social work", "nutrition")

CONSULT_SERVICES = ("cardiology", "renal", "GI", "ID", "neurology", "pulmonary", "surgery",
                    "palliative care", "psychiatry", "urology", "endocrine", "heme/onc",
                    "wound care", "PT", "OT", "speech and swallow", "nutrition", "social work")

SPECIALTIES = ("Cardiology", "Nephrology", "Gastroenterology", "Pulmonary Medicine", "Neurology",
               "Oncology", "Endocrinology", "Internal Medicine", "Geriatrics", "Infectious Disease",
               "Urology", "Orthopedics", "Rheumatology", "Hematology", "Primary Care")

RELIGIONS = ("Catholic", "Jewish", "Muslim", "Baptist", "Methodist", "Buddhist", "Lutheran")

LANGUAGES = ("Spanish", "Portuguese", "Vietnamese", "Italian", "Haitian Creole", "Polish",
             "Cantonese", "Russian", "Cape Verdean Creole", "German", "French", "Arabic", "Hindi")


def _f(rng: random.Random, lo: float, hi: float, nd: int = 1) -> str:
    return f"{rng.uniform(lo, hi):.{nd}f}"


def time_24(rng: random.Random) -> str:
    return f"{rng.randrange(24):02d}{rng.choice(['00', '00', '15', '30', '45', '10', '20', '50'])}"


def time_any(rng: random.Random) -> str:
    h = rng.randint(1, 12)
    return rng.choice([
        time_24(rng), time_24(rng), f"{h}pm", f"{h}am", f"{h} pm", f"{h}:{rng.choice(['00', '15', '30', '45'])}",
        f"{h}:{rng.choice(['05', '20', '40'])} am", f"{h}p", f"{h}a", "noon", "midnight", time_24(rng),
    ])


def shift(rng: random.Random) -> str:
    return rng.choice(["7a-7p", "7p-7a", "0700-1900", "1900-0700", "7a-3p", "3p-11p", "11p-7a",
                       "0700-1500", "1500-2300", "2300-0700", "days", "nights", "eves"])


def vital(rng: random.Random, what: str) -> str:
    if what == "hr":
        hr = rng.randint(52, 128)
        return rng.choice([f"HR {hr}", f"HR {hr // 10 * 10}s", f"hr {hr}-{hr + rng.randint(5, 25)}",
                           f"HR {hr} {rng.choice(['NSR', 'SR', 'ST', 'AF', 'afib', 'SB'])}",
                           f"{rng.choice(['NSR', 'SR', 'ST'])} {hr // 10 * 10}-{hr // 10 * 10 + 10}s"])
    if what == "bp":
        s, d = rng.randint(84, 178), rng.randint(42, 96)
        return rng.choice([f"BP {s}/{d}", f"SBP {s // 10 * 10}-{s // 10 * 10 + 20}s", f"bp {s}/{d}",
                           f"MAP {rng.randint(58, 95)}", f"NBP {s}/{d}", f"ABP {s}/{d}"])
    if what == "rr":
        return rng.choice([f"RR {rng.randint(10, 32)}", f"rr {rng.randint(12, 24)}-{rng.randint(25, 34)}",
                           f"RR teens-{rng.choice(['20s', '30s'])}"])
    if what == "temp":
        t = rng.uniform(36.0, 39.4)
        return rng.choice([f"T {t:.1f}", f"Tmax {t:.1f}", f"temp {t * 9 / 5 + 32:.1f}F",
                           f"T max {t * 9 / 5 + 32:.1f}", f"afebrile, Tmax {t:.1f}"])
    if what == "spo2":
        return rng.choice([f"SpO2 {rng.randint(88, 100)}%", f"sats {rng.randint(89, 96)}-{rng.randint(97, 100)}%",
                           f"O2 sat {rng.randint(90, 100)}%", f"sat {rng.randint(90, 99)}% on {rng.randint(2, 6)}L NC"])
    if what == "cvp":
        return rng.choice([f"CVP {rng.randint(4, 18)}", f"PAD {rng.randint(10, 28)}",
                           f"PAS {rng.randint(25, 60)}/{rng.randint(10, 28)}", f"CI {_f(rng, 1.6, 3.8)}",
                           f"CO {_f(rng, 3.0, 7.5)}", f"SVR {rng.randint(600, 1800)}",
                           f"wedge {rng.randint(8, 26)}"])
    raise KeyError(what)


def vitals_line(rng: random.Random) -> str:
    items = [vital(rng, k) for k in ("hr", "bp", "rr", "temp", "spo2")]
    rng.shuffle(items)
    return rng.choice([", ", " ", "; ", "  "]).join(items[:rng.randint(2, 5)])


LABS = {
    "K": (3.0, 5.8, 1), "Na": (126, 148, 0), "Cl": (94, 112, 0), "CO2": (16, 32, 0),
    "BUN": (6, 88, 0), "Cr": (0.5, 4.8, 1), "glucose": (62, 388, 0), "Mg": (1.3, 2.6, 1),
    "Ca": (7.4, 10.6, 1), "Phos": (1.8, 5.9, 1), "WBC": (2.1, 24.8, 1), "Hct": (20.1, 44.0, 1),
    "Hgb": (6.8, 15.2, 1), "plt": (38, 480, 0), "INR": (0.9, 4.2, 1), "PTT": (24, 98, 1),
    "lactate": (0.6, 6.8, 1), "troponin": (0.01, 2.8, 2), "CK": (40, 2400, 0),
    "albumin": (1.8, 4.5, 1), "Tbili": (0.2, 8.4, 1), "ALT": (8, 420, 0), "AST": (10, 510, 0),
    "lipase": (12, 1600, 0), "BNP": (40, 3800, 0), "iCa": (0.98, 1.32, 2), "FS": (68, 320, 0),
}


def lab(rng: random.Random, name: str | None = None) -> str:
    name = name or rng.choice(sorted(LABS))
    lo, hi, nd = LABS[name]
    value = _f(rng, lo, hi, nd)
    return rng.choice([f"{name} {value}", f"{name} {value}", f"{name}: {value}", f"{name} {value}",
                       f"{name.lower()} {value}", f"{name} = {value}"])


def labs_line(rng: random.Random, k: int | None = None) -> str:
    names = rng.sample(sorted(LABS), k or rng.randint(2, 6))
    return rng.choice([", ", " ", "; "]).join(lab(rng, n) for n in names)


def abg(rng: random.Random) -> str:
    return (f"{rng.choice(['ABG', 'abg', 'VBG'])} {_f(rng, 7.18, 7.52, 2)}/{rng.randint(28, 68)}/"
            f"{rng.randint(58, 240)}")


def vent(rng: random.Random) -> str:
    return rng.choice([
        f"AC {rng.choice([400, 450, 500, 550])}x{rng.randint(12, 24)}, PEEP {rng.choice([5, 8, 10, 12])}, FiO2 {rng.choice([30, 35, 40, 50, 60, 100])}%",
        f"CPAP/PS {rng.choice([5, 8, 10, 12])}/{rng.choice([5, 8])} FiO2 {rng.choice([30, 40, 50])}%",
        f"SIMV {rng.choice([450, 500])}x{rng.randint(8, 14)} PS {rng.choice([5, 10])} PEEP {rng.choice([5, 8])}",
        f"PSV {rng.choice([5, 8, 10, 15])}/{rng.choice([5, 8])} 40%",
        f"TV {rng.choice([380, 420, 450, 500, 550])} RR {rng.randint(12, 22)} PEEP {rng.choice([5, 8, 10])} FiO2 {rng.choice([0.4, 0.5, 0.6])}",
    ])


#: Plausible doses, routes and frequencies by drug (amounts, routes, frequencies).
DOSES: dict[str, tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]] = {
    "Lasix": (("20mg", "40mg", "80mg"), ("IV", "PO"), ("x1", "BID", "daily")),
    "furosemide": (("20 mg", "40 mg"), ("IV", "PO"), ("BID", "daily")),
    "metoprolol": (("12.5mg", "25mg", "50mg", "5mg"), ("PO", "IV"), ("BID", "q6h", "TID")),
    "Lopressor": (("12.5mg", "25mg", "5mg"), ("PO", "IV"), ("BID", "q6h")),
    "lisinopril": (("5mg", "10mg", "20mg", "40mg"), ("PO",), ("daily", "QD")),
    "atorvastatin": (("20mg", "40mg", "80mg"), ("PO",), ("daily", "qhs")),
    "aspirin": (("81mg", "325mg"), ("PO", "PR"), ("daily",)),
    "Plavix": (("75mg",), ("PO",), ("daily",)),
    "metformin": (("500mg", "850mg", "1000mg"), ("PO",), ("BID",)),
    "levothyroxine": (("25mcg", "50mcg", "88mcg", "112mcg"), ("PO",), ("daily",)),
    "Synthroid": (("50mcg", "75mcg", "100mcg"), ("PO",), ("daily",)),
    "sertraline": (("25mg", "50mg", "100mg"), ("PO",), ("daily",)),
    "amlodipine": (("2.5mg", "5mg", "10mg"), ("PO",), ("daily",)),
    "Coumadin": (("1mg", "2mg", "2.5mg", "5mg"), ("PO",), ("qhs", "daily")),
    "tamsulosin": (("0.4mg",), ("PO",), ("qhs",)),
    "gabapentin": (("100mg", "300mg", "600mg"), ("PO",), ("TID", "qhs")),
    "Eliquis": (("2.5mg", "5mg"), ("PO",), ("BID",)),
    "omeprazole": (("20mg", "40mg"), ("PO",), ("daily", "BID")),
    "Colace": (("100mg",), ("PO",), ("BID", "TID")),
    "senna": (("8.6mg", "2 tabs"), ("PO",), ("qhs", "BID")),
    "allopurinol": (("100mg", "300mg"), ("PO",), ("daily",)),
    "prednisone": (("5mg", "10mg", "20mg", "40mg", "60mg"), ("PO",), ("daily",)),
    "Keppra": (("500mg", "750mg", "1000mg"), ("PO", "IV"), ("BID",)),
    "Seroquel": (("12.5mg", "25mg", "50mg"), ("PO",), ("qhs", "BID prn")),
    "trazodone": (("25mg", "50mg"), ("PO",), ("qhs prn", "qhs")),
    "oxycodone": (("5mg", "10mg"), ("PO",), ("q4h prn", "q6h prn")),
    "Tylenol": (("650mg", "1g"), ("PO", "PR"), ("q6h prn", "q6h")),
    "digoxin": (("0.125mg", "0.25mg"), ("PO", "IV"), ("daily",)),
    "amiodarone": (("200mg", "400mg", "150mg"), ("PO", "IV"), ("daily", "BID", "x1")),
    "morphine": (("2mg", "4mg"), ("IV",), ("q2h prn", "q4h prn", "x1")),
    "Dilaudid": (("0.5mg", "1mg"), ("IV",), ("q3h prn", "x1", "q2h prn")),
    "Ativan": (("0.5mg", "1mg", "2mg"), ("IV", "PO"), ("x1", "q4h prn", "q6h prn")),
    "Haldol": (("2mg", "5mg"), ("IV", "IM"), ("x1", "q6h prn")),
    "Zofran": (("4mg",), ("IV", "PO"), ("q6h prn", "x1")),
    "Reglan": (("10mg",), ("IV", "PO"), ("q6h", "AC&HS")),
    "heparin": (("5000 units",), ("SC", "sq"), ("q8h", "q12h", "TID")),
    "Lovenox": (("40mg", "1mg/kg"), ("SC", "sq"), ("daily", "q12h")),
    "insulin": (("2 units", "4 units", "6 units", "10 units"), ("SC", "sq"), ("per SSI", "qAC", "x1")),
    "Lantus": (("10 units", "18 units", "24 units", "36 units"), ("SC",), ("qhs", "daily")),
    "potassium chloride": (("20 mEq", "40 mEq"), ("PO", "IV"), ("x1", "x2")),
    "KCl": (("20meq", "40meq", "10meq"), ("PO", "IV"), ("x1", "x2", "x4")),
    "magnesium sulfate": (("2g", "2 gm", "4g"), ("IV",), ("x1",)),
    "vancomycin": (("1g", "1.25g", "1.5g", "750mg"), ("IV",), ("q12h", "q24h", "q8h")),
    "Zosyn": (("3.375g", "4.5g"), ("IV",), ("q6h", "q8h")),
    "cefepime": (("1g", "2g"), ("IV",), ("q8h", "q12h")),
    "ceftriaxone": (("1g", "2g"), ("IV",), ("daily", "q24h")),
    "Flagyl": (("500mg",), ("IV", "PO"), ("q8h", "TID")),
    "levofloxacin": (("500mg", "750mg"), ("IV", "PO"), ("daily", "q48h")),
    "Bactrim": (("1 DS tab",), ("PO",), ("BID",)),
    "albuterol": (("2.5mg", "2 puffs"), ("neb", "MDI"), ("q4h prn", "q6h")),
    "Protonix": (("40mg",), ("IV", "PO"), ("daily", "BID")),
    "pantoprazole": (("40 mg",), ("IV", "PO"), ("daily", "q12h")),
    "famotidine": (("20mg",), ("IV", "PO"), ("BID",)),
    "lactulose": (("30ml", "20 gm"), ("PO", "via NGT"), ("TID", "QID")),
    "thiamine": (("100mg",), ("IV", "PO"), ("daily",)),
    "Narcan": (("0.4mg", "0.04mg"), ("IV",), ("x1",)),
    "nitroglycerin": (("0.4mg",), ("SL",), ("x1", "q5min x3 prn")),
    "Solu-Medrol": (("40mg", "60mg", "125mg"), ("IV",), ("q8h", "q6h", "x1")),
    "fluconazole": (("200mg", "400mg"), ("IV", "PO"), ("daily",)),
    "acyclovir": (("400mg", "10mg/kg"), ("PO", "IV"), ("TID", "q8h")),
}


def dose(rng: random.Random, med: str | None = None) -> str:
    med = med or rng.choice(sorted(DOSES))
    if med in DOSES:
        amounts, routes, freqs = DOSES[med]
        amount, route, freq = rng.choice(amounts), rng.choice(routes), rng.choice(freqs)
    else:
        amount = rng.choice(["1mg", "2mg", "5mg", "10mg", "25mg", "50mg", "100mg"])
        route, freq = rng.choice(["IV", "PO", "po"]), rng.choice(["x1", "daily", "prn", "BID"])
    if rng.random() < 0.25:
        route, freq = route.lower(), freq.lower()
    return rng.choice([f"{med} {amount} {route} {freq}", f"{med} {amount} {route} {freq}",
                       f"{med} {amount} {route}", f"{med} {amount}"])


def drip(rng: random.Random) -> str:
    name, unit, (lo, hi) = rng.choice(DRIPS)
    nd = 2 if hi < 1.5 else (1 if hi < 20 else 0)
    return rng.choice([f"{name} @ {_f(rng, lo, hi, nd)} {unit}", f"{name} gtt at {_f(rng, lo, hi, nd)}{unit}",
                       f"{name} {_f(rng, lo, hi, nd)}"])


def uo(rng: random.Random) -> str:
    lo = rng.choice([10, 15, 20, 25, 30, 40, 50, 60])
    return rng.choice([f"{lo}-{lo + rng.choice([10, 20, 40, 70])}cc/hr", f"{lo} ml/hr",
                       f"UO {lo}-{lo + 30}cc/h", f"{rng.randint(300, 2400)}cc total"])


def io(rng: random.Random) -> str:
    return rng.choice([f"+{_f(rng, 0.2, 3.5)}L", f"{rng.randint(300, 3200)}/{rng.randint(200, 2800)}",
                       f"net {rng.choice(['+', '-'])}{rng.randint(100, 2400)}cc", f"-{_f(rng, 0.2, 2.5)}L"])


def pain(rng: random.Random) -> str:
    n = rng.randint(0, 10)
    return rng.choice([f"{n}/10", f"{n}/10", f"{n}-{min(10, n + 2)}/10", f"{n} out of 10"])


def fraction_decoy(rng: random.Random) -> str:
    """Slash numbers that look like dates but are not: strength, murmurs, fluids."""
    return rng.choice([f"strength {rng.randint(2, 5)}/5", f"{rng.choice(['II', 'III'])}/VI SEM",
                       f"grade {rng.randint(1, 4)}/6 murmur", "D5 1/2NS", "1/2 NS", f"{rng.randint(2, 5)}/5 grip",
                       f"{rng.choice(['24', '48', '72'])}/7 days", "A&Ox3", "a&o x2", "3/4 of meals",
                       f"{rng.randint(1, 4)}/{rng.randint(4, 6)} cultures", "20/20", f"{rng.randint(3, 5)}/5 grip"])


def dx(rng: random.Random) -> str:
    return rng.choice(DIAGNOSES)


def pmh(rng: random.Random) -> str:
    items = rng.sample(DIAGNOSES, rng.randint(3, 7))
    if rng.random() < 0.5:
        items.append("s/p " + rng.choice(PROCEDURES))
    return rng.choice([", ", "; ", ", ", " / "]).join(items)


def med_list(rng: random.Random, sep: str = ", ") -> str:
    names = [m for m in PO_MEDS if m in DOSES]
    return sep.join(dose(rng, m) for m in rng.sample(names, rng.randint(3, 8)))


def number(rng: random.Random, lo: int, hi: int) -> str:
    return str(rng.randint(lo, hi))
