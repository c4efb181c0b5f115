"""Word banks and clinical sentences of the Spanish case reports (:mod:`.spanish`).

Context text only: none of it is PHI. The clinical sentences carry the numbers a
real case report has (doses, laboratory values, blood pressures, durations) so that
a tagger must tell them from dates, ages and identifiers.
"""
from __future__ import annotations

MONTHS = ("enero", "febrero", "marzo", "abril", "mayo", "junio", "julio", "agosto",
          "septiembre", "octubre", "noviembre", "diciembre")

PROFESSIONS = (
    "albañil", "agricultor", "ganadero", "maestra", "profesor de secundaria", "enfermera",
    "camarero", "cocinero", "minero", "conductor de autobús", "camionero", "pintor",
    "carpintero", "electricista", "fontanero", "mecánico", "administrativo", "abogado",
    "ama de casa", "peluquera", "dependienta", "soldador", "pescador", "marinero",
    "panadero", "carnicero", "informático", "ingeniero", "arquitecto", "veterinario",
    "farmacéutico", "policía", "militar", "bombero", "jardinero", "limpiadora",
    "auxiliar de enfermería", "estudiante de medicina", "músico", "periodista",
    "trabajador de la construcción", "operario de una fábrica de plásticos",
    "agente comercial", "taxista", "cartero", "costurera", "joyero", "tornero",
)
OTHER_SUBJECT = ("Testigo de Jehová", "testigo de Jehová", "etnia gitana", "religión musulmana",
                 "situación de indigencia", "interno en un centro penitenciario",
                 "residente en un centro de acogida")
RELATIVES = {"H": ("esposa", "mujer", "hija", "hijo", "hermana", "hermano", "madre", "padre"),
             "M": ("marido", "esposo", "hija", "hijo", "hermana", "hermano", "madre", "padre")}
HOSPITAL_SAINTS = ("Virgen del Rocío", "Virgen de la Arrixaca", "La Paz", "La Fe", "Doce de Octubre",
                   "Ramón y Cajal", "Puerta de Hierro", "Marqués de Valdecilla", "Son Espases",
                   "Reina Sofía", "Miguel Servet", "San Cecilio", "Virgen de las Nieves",
                   "Severo Ochoa", "Príncipe de Asturias", "Infanta Leonor", "Santa Lucía",
                   "Nuestra Señora de Candelaria", "San Pedro de Alcántara", "Gregorio Marañón",
                   "Germans Trias i Pujol", "Vall d'Hebron", "Clínic", "de Cruces", "Donostia",
                   "Río Hortega", "Juan Ramón Jiménez", "Torrecárdenas", "Virgen Macarena")
HEALTH_SERVICES = ("Servicio Madrileño de Salud", "Servicio Andaluz de Salud", "Servicio Gallego de Salud",
                   "Osakidetza", "Servicio Canario de la Salud", "Instituto Catalán de la Salud",
                   "Servicio Navarro de Salud", "Servicio Murciano de Salud", "Servicio Aragonés de Salud",
                   "Instituto Nacional de la Seguridad Social", "Instituto Mexicano del Seguro Social",
                   "Cruz Roja Española", "Instituto Nacional de Toxicología y Ciencias Forenses",
                   "Organización Nacional de Trasplantes", "Centro Nacional de Microbiología")
DEPARTMENTS = ("Servicio de Urología", "Servicio de Medicina Interna", "Servicio de Cardiología",
               "Servicio de Neurología", "Servicio de Cirugía General y del Aparato Digestivo",
               "Servicio de Oftalmología", "Servicio de Dermatología", "Servicio de Pediatría",
               "Servicio de Oncología Médica", "Servicio de Anatomía Patológica", "Unidad de Cuidados Intensivos",
               "Servicio de Neumología", "Servicio de Nefrología", "Servicio de Traumatología",
               "Servicio de Otorrinolaringología", "Servicio de Ginecología y Obstetricia")

#: Clinical sentences without PHI (any order makes a plausible, if terse, case).
CLINICAL = (
    "Como antecedentes personales destacan hipertensión arterial, diabetes mellitus tipo 2 y dislipemia en tratamiento.",
    "No refiere alergias medicamentosas conocidas.",
    "Exfumador de 20 paquetes/año desde hace 10 años; bebedor ocasional.",
    "En la exploración física presentaba TA 135/85 mmHg, FC 92 lpm, Tª 37,8 ºC y saturación de oxígeno del 96 %.",
    "La analítica mostró Hb 11,2 g/dl, leucocitos 14.300/mm3 con 82 % de neutrófilos, PCR 8,4 mg/dl y creatinina 1,3 mg/dl.",
    "Se realizó una ecografía abdominal que mostró una masa sólida de 4 x 3 cm en el polo inferior del riñón derecho.",
    "La tomografía computarizada confirmó la lesión, sin adenopatías ni metástasis a distancia.",
    "Se inició tratamiento con amoxicilina-clavulánico 875/125 mg cada 8 horas durante 10 días.",
    "El paciente evolucionó favorablemente y fue dado de alta al quinto día postoperatorio.",
    "El estudio anatomopatológico informó de un carcinoma de células claras, grado 2 de Fuhrman.",
    "Se pautó prednisona 1 mg/kg/día con descenso progresivo en 6 semanas.",
    "A los 3 meses de seguimiento permanece asintomático y sin signos de recidiva.",
    "La radiografía de tórax no mostró alteraciones significativas.",
    "Se practicó una resección transuretral y el material se remitió para estudio histológico.",
    "En la resonancia magnética se observó una lesión hiperintensa en T2 de 12 mm en el lóbulo frontal izquierdo.",
    "Refiere dolor abdominal de 48 horas de evolución, náuseas y dos episodios de vómitos.",
    "El electrocardiograma mostró ritmo sinusal a 78 lpm sin alteraciones de la repolarización.",
    "Ante la sospecha de endocarditis se solicitaron hemocultivos seriados, que fueron positivos para Staphylococcus aureus.",
    "La función renal se normalizó tras la hidratación intravenosa.",
    "Se decidió tratamiento quirúrgico mediante nefrectomía radical laparoscópica.",
    "La agudeza visual era de 0,5 en el ojo derecho y de 0,8 en el izquierdo.",
    "La biopsia cutánea mostró un infiltrado linfocitario perivascular sin atipias.",
    "Recibió 4 ciclos de quimioterapia con cisplatino y etopósido con buena tolerancia.",
    "Los marcadores tumorales (CEA, CA 19-9) fueron normales.",
    "La serología para VIH, VHB y VHC fue negativa.",
    "El paciente presentó un cuadro de fiebre de hasta 39 ºC, escalofríos y disuria.",
    "Se le realizó una colecistectomía laparoscópica sin incidencias.",
    "A la exploración se palpaba una masa dura, no dolorosa, de unos 5 cm de diámetro.",
    "El sedimento urinario mostró más de 50 hematíes por campo.",
    "Tras 2 semanas de tratamiento antibiótico la evolución fue satisfactoria.",
    "Se completó el estudio con una gammagrafía ósea que no mostró captaciones patológicas.",
    "Actualmente sigue controles periódicos en consultas externas cada 6 meses.",
    "No presentaba antecedentes familiares de interés.",
    "La paciente tomaba de forma habitual omeprazol 20 mg, enalapril 10 mg y metformina 850 mg.",
    "Durante el ingreso presentó un episodio de fibrilación auricular que revirtió con amiodarona.",
    "El índice de masa corporal era de 31,4 kg/m2.",
    "La gasometría arterial mostró pH 7,32, pCO2 48 mmHg y pO2 62 mmHg.",
    "En el hemograma destacaba una trombopenia de 85.000 plaquetas/mm3.",
    "Ante estos hallazgos se estableció el diagnóstico de síndrome nefrótico.",
    "La paciente fue intervenida bajo anestesia general con una duración de 120 minutos.",
    # eponyms, scales, staging and brand names: capitalised words and numbers that are no PHI
    "Se planteó el diagnóstico diferencial con la enfermedad de Crohn y el síndrome de Behçet.",
    "El signo de Murphy fue negativo y la puñopercusión renal bilateral, dolorosa.",
    "Presentaba una puntuación de 15 en la escala de coma de Glasgow.",
    "La clasificación de Gleason fue 3 + 4 = 7 en 4 de los 12 cilindros.",
    "Se estadificó como T2N0M0 según la clasificación TNM de 2017.",
    "Se sospechó un síndrome de Guillain-Barré y se realizó una punción lumbar.",
    "La maniobra de Valsalva no modificó el soplo sistólico de grado II/VI.",
    "El cultivo fue positivo para Escherichia coli sensible a fosfomicina.",
    "Se pautó Sintrom según controles de INR, con objetivo entre 2 y 3.",
    "La prueba de Mantoux fue negativa (0 mm a las 72 horas).",
    "En la fundoscopia se apreciaron manchas de Roth en ambos ojos.",
    "El índice de Karnofsky al diagnóstico era del 80 %.",
    "Se colocó un catéter doble J y una sonda de Foley de 18 Fr.",
    "La clasificación de Child-Pugh era B y la puntuación MELD de 14.",
    "Se realizó una técnica de Whipple con reconstrucción en Y de Roux.",
    "Fue tratado con Augmentine y Nolotil, con mejoría parcial del dolor.",
    "El test de Schirmer fue de 4 mm a los 5 minutos.",
    "Se practicó una tinción de Ziehl-Neelsen, que resultó negativa.",
    "Tenía antecedentes de enfermedad de Parkinson de 8 años de evolución.",
    "Hace 2 años presentó un episodio similar que se resolvió espontáneamente.",
    "Refería una pérdida de 6 kg de peso en los últimos 3 meses.",
    "El paciente fue valorado por Cirugía y por Medicina Interna durante el ingreso.",
    "Ingresó en la Unidad de Cuidados Intensivos durante 48 horas.",
    "Se remitió al Hospital de Día de Oncología para recibir el tratamiento.",
    # durations, ranges and lists that look like ages, places or names
    "Fue dado de alta a los 5 días de la intervención.",
    "A los 14 días se retiró el drenaje sin incidencias.",
    "Tras 3 años de seguimiento no ha presentado recidiva.",
    "Refiere cefalea de 2 años de evolución que no cede con analgésicos.",
    "Glucosa 95 mg/dl (rango 70-100), urea 56 mg/dl (rango 10-50) y creatinina 1,1 mg/dl (rango 0,6-1,2).",
    "Una vez a la semana se añaden oligoelementos (Mn, Cr, Cu, Se) a la nutrición parenteral.",
    "La albúmina era de 2,9 g/dl (N: 3,4-5) y las proteínas totales de 5,8 g/dl (N: 6,4-8,2).",
    "El seguimiento se realiza en la Sección de Nutrición del Servicio de Farmacia.",
)
#: Section headings of a case report (they start a line).
SECTIONS = ("Anamnesis", "Antecedentes personales", "Enfermedad actual", "Exploración física",
            "Pruebas complementarias", "Diagnóstico", "Tratamiento", "Evolución", "Discusión",
            "Juicio clínico")
